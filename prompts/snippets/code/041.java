List<String> names = people.stream()
        .filter(p -> p.getAge() >= @@M18)
        .map(Person::@@MgetName)
        .sorted()
        .collect(Collectors.@@CtoList());
