with open("people.csv", newline="") as fh:
    reader = csv.DictReader(fh)
    adults = [row["name"] for row in reader if int(row["age"]) >= @@C18]

print(len(adults), "adults @@Mfound")
