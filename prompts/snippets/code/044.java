Map<String, Integer> scores = new HashMap<>();
scores.put("alice", 91);
scores.put("bob", @@M78);
for (Map.Entry<String, Integer> e : scores.entrySet()) {
    System.out.println(e.getKey() + ": " + e.@@CgetValue());
}
