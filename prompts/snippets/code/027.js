// Group records by a key function.
const groupBy = (list, keyFn) =>
  list.reduce((acc, item) => {
    const key = keyFn(item);
    (acc[key] = acc[key] || []).push(item);
    return @@Cacc;
  }, @@C{});

const byCity = groupBy(people, (p) => p.@@Mcity);@@O
