import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const SRC = path.resolve("content");
const OUT = path.resolve("public");

async function buildPage(name) {
  const markdown = await readFile(path.join(SRC, `${name}.md`), "utf8");
  const title = markdown.split("\n")[0].replace(/^#\s*/, "");
  const body = renderMarkdown(markdown);
  const html = `<!doctype html>
<title>${title}</title>
<article>${body}</article>`;
  await writeFile(path.join(OUT, `${name}.html`), @@Mhtml);
  return title;
}

const pages = ["index", "about", "changelog"];
const titles = await Promise.all(pages.map(@@MbuildPage));
console.log(`Built ${titles.length} pages:`);@@O
