// Renders kustomize directories with `kubectl kustomize` and validates every object against
// the Kubernetes and Prometheus Operator schemas, twice:
//   1. kubernetes-models' validators (JSON Schema compiled from the upstream OpenAPI documents):
//      types, required fields, enums, patterns;
//   2. the same packages' TypeScript interfaces, through the TypeScript compiler: an object
//      literal may not carry a property its type lacks, so a misspelled or misplaced field
//      fails (the API server rejects those under kubectl's default strict validation; the
//      JSON Schemas allow them).
import { execFile } from "node:child_process";
import { readdirSync, statSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { parseAllDocuments } from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, "../..");
const require = createRequire(import.meta.url);

// Every directory below `root` that holds a kustomization.yaml (what `kubectl kustomize` builds).
export function kustomizeDirs(root) {
  const out = [];
  const walk = (dir) => {
    if (existsSync(path.join(dir, "kustomization.yaml"))) out.push(dir);
    for (const e of readdirSync(dir)) {
      if (e === "node_modules") continue;
      const p = path.join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
    }
  };
  walk(root);
  return out.sort();
}

export async function render(dir) {
  const text = await new Promise((resolve, reject) =>
    execFile("kubectl", ["kustomize", dir], { maxBuffer: 16 << 20 }, (err, out, errText) =>
      err ? reject(new Error(`kubectl kustomize ${dir}: ${errText || err.message}`)) : resolve(out),
    ),
  );
  return parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length) throw new Error(`${dir}: ${d.errors[0].message}`);
      return d.toJS();
    })
    .filter((o) => o !== null);
}

// The module of kubernetes-models that defines apiVersion/kind.
function modelModule(apiVersion, kind) {
  if (apiVersion.startsWith("monitoring.coreos.com/"))
    return `@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`;
  return `kubernetes-models/${apiVersion}/${kind}`;
}

function describe(o) {
  return `${o.kind}/${o.metadata?.name ?? "?"}`;
}

// JSON Schema validation; returns problems as strings.
async function schemaProblems(objects) {
  const problems = [];
  for (const o of objects) {
    if (!o.apiVersion || !o.kind) {
      problems.push(`object without apiVersion/kind: ${JSON.stringify(o).slice(0, 80)}`);
      continue;
    }
    let mod;
    try {
      mod = await import(modelModule(o.apiVersion, o.kind));
    } catch {
      problems.push(`${describe(o)}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new mod[o.kind](o).validate();
    } catch (e) {
      problems.push(`${describe(o)}: ${e.message}`);
    }
  }
  return problems;
}

// Strict field check: each object as a typed object literal, compiled together in one program.
function typeProblems(objects) {
  const fileName = path.join(here, "__rendered__.ts");
  let source = "";
  const spans = [];
  objects.forEach((o, i) => {
    if (!o.apiVersion || !o.kind) return;
    const start = source.length;
    source += `import type { I${o.kind} as T${i} } from "${modelModule(o.apiVersion, o.kind)}";\n`;
    source += `export const o${i}: T${i} = ${JSON.stringify(o, null, 1)};\n`;
    spans.push({ start, end: source.length, object: o });
  });
  const options = {
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    types: [],
    lib: ["lib.es2020.d.ts"],
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    baseUrl: here,
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (f) => (f === fileName ? source : readFile(f));
  host.fileExists = ((exists) => (f) => f === fileName || exists(f))(host.fileExists.bind(host));
  host.getSourceFile = (f, lang, ...rest) =>
    f === fileName ? ts.createSourceFile(f, source, lang) : getSourceFile(f, lang, ...rest);
  const program = ts.createProgram([fileName], options, host);
  const diagnostics = ts
    .getPreEmitDiagnostics(program)
    .filter((d) => !d.file || d.file.fileName === fileName);
  const sourceFile = program.getSourceFile(fileName);
  return diagnostics.map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, " ");
    const span = spans.find((s) => d.start >= s.start && d.start < s.end);
    if (!span) return text;
    return `${describe(span.object)} at ${jsonPath(sourceFile, d.start)}: ${text}`;
  });
}

// The path (/spec/template/...) of the property or element at a position of the generated
// source, so that a problem points into the manifest rather than into generated code.
function jsonPath(sourceFile, pos) {
  const parts = [];
  const visit = (node) => {
    if (pos < node.getStart(sourceFile) || pos >= node.getEnd()) return;
    if (ts.isPropertyAssignment(node)) parts.push(node.name.text);
    if (ts.isArrayLiteralExpression(node)) {
      const i = node.elements.findIndex((e) => pos >= e.getStart(sourceFile) && pos < e.getEnd());
      if (i >= 0) parts.push(String(i));
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return "/" + parts.join("/");
}

// Every problem with the rendered objects; empty when all are valid. Objects rendered the same
// by several directories are checked once.
export async function validateObjects(objects) {
  const unique = [...new Map(objects.map((o) => [JSON.stringify(o), o])).values()];
  return [...(await schemaProblems(unique)), ...typeProblems(unique)];
}

// The packages' own versions, for messages.
export function schemaVersions() {
  const v = (name) => require(`${name}/package.json`).version;
  return `kubernetes-models ${v("kubernetes-models")}, @kubernetes-models/prometheus-operator ${v(
    "@kubernetes-models/prometheus-operator",
  )}`;
}
