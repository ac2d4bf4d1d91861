// deploy/slurm/prolog.sh against the real binary on fixture roots: a clean node lets the job
// run, a node with critical violations fails it (and logs why), and a configuration error is
// logged and passes unless told to fail.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { repoRoot } from "./validate.mjs";

const binary = process.env.FW_BINARY || path.join(repoRoot, "build/fabricwatch");
const prolog = path.join(repoRoot, "deploy/slurm/prolog.sh");
const dir = mkdtempSync(path.join(os.tmpdir(), "fw-slurm-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function runProlog(env) {
  const log = path.join(dir, `prolog-${n++}.log`);
  const r = spawnSync(prolog, [], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, SLURM_JOB_ID: "42", FABRICWATCH: binary,
      FABRICWATCH_CONFIG: path.join(dir, "none.toml"), FABRICWATCH_LOG: log, ...env },
  });
  let text = "";
  try {
    text = readFileSync(log, "utf8");
  } catch {}
  return { status: r.status, stderr: r.stderr, log: text };
}
const fixture = (name) => path.join(repoRoot, "tests/fixtures", name);

test("a clean node runs the job", () => {
  const r = runProlog({ FABRICWATCH_ROOTFS: fixture("ib_ndr") });
  assert.equal(r.status, 0, r.stderr + r.log);
  assert.equal(r.log, "");
});

test("a node with critical violations fails the job and logs the remediation", () => {
  const r = runProlog({ FABRICWATCH_ROOTFS: fixture("broken") });
  assert.equal(r.status, 1);
  assert.match(r.log, /job=42 .* pre-flight FAILED/);
  assert.match(r.log, /baseline\/rdma-ports-active/);
  assert.match(r.log, /remediation: /);
});

test("the node's resource group comes from the environment", () => {
  // As ib-hdr the broken fixture's 200 Gb/s port is no longer below the group's rate.
  const ndr = runProlog({ FABRICWATCH_ROOTFS: fixture("broken"), FABRICWATCH_RESOURCE_GROUP: "ib-ndr" });
  const hdr = runProlog({ FABRICWATCH_ROOTFS: fixture("broken"), FABRICWATCH_RESOURCE_GROUP: "ib-hdr" });
  assert.match(ndr.log, /resource group: ib-ndr \(flag\)/);
  assert.match(ndr.log, /infiniband\/ib-port-rate/);
  assert.doesNotMatch(hdr.log, /infiniband\/ib-port-rate/);
});

test("a configuration error (exit 2) is logged and passes, or fails when told to", () => {
  const bad = path.join(dir, "bad.toml");
  writeFileSync(bad, "[web]\nthreads = \"many\"\n");
  const pass = runProlog({ FABRICWATCH_ROOTFS: fixture("broken"), FABRICWATCH_CONFIG: bad });
  assert.equal(pass.status, 0);
  assert.match(pass.log, /could not run \(fabricwatch exit 2; on error: pass\)/);
  assert.match(pass.log, /bad\.toml:2:/);
  const fail = runProlog({ FABRICWATCH_ROOTFS: fixture("broken"), FABRICWATCH_CONFIG: bad,
    FABRICWATCH_ON_ERROR: "fail" });
  assert.equal(fail.status, 1);
});

test("a missing binary is an error, not a drained node", () => {
  const r = runProlog({ FABRICWATCH: path.join(dir, "nope") });
  assert.equal(r.status, 0);
  assert.match(r.log, /exit 127/);
});

test("shellcheck finds nothing", () => {
  const r = spawnSync("shellcheck", [prolog], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
