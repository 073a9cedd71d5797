// Reads [[tex, displayMode], ...] as JSON on stdin; writes [{html} | {error}] on stdout.
const katex = require(require.resolve("katex", { paths: [process.cwd()] }));
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(([tex, display]) => {
    try {
      return { html: katex.renderToString(tex, { displayMode: display, throwOnError: true, output: "htmlAndMathml" }) };
    } catch (e) {
      return { error: String(e.message || e) };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
