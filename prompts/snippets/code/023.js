const fs = require("fs/promises");

async function countLines(path) {
  const text = await fs.readFile(path, "utf8");
  return text.split("\n").length;
}

countLines("notes.txt")
  .then((n) => console.log(n, "lines"))
  .catch((err) => console.@@Cerror(err));
