// deploy/systemd: the unit passes `systemd-analyze verify` without a warning, and the packaged
// configuration is valid for the binary.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "./validate.mjs";

const binary = process.env.FW_BINARY || path.join(repoRoot, "build/fabricwatch");
const unit = readFileSync(path.join(repoRoot, "deploy/systemd/fabricwatch.service"), "utf8");

test("the unit verifies cleanly", () => {
  // verify also checks that ExecStart's program exists: point it at the built binary.
  const dir = mkdtempSync(path.join(os.tmpdir(), "fw-systemd-"));
  try {
    const file = path.join(dir, "fabricwatch.service");
    writeFileSync(file, unit.replaceAll("/usr/local/bin/fabricwatch", path.resolve(binary)));
    const r = spawnSync("systemd-analyze", ["verify", file], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr.trim(), "", "systemd-analyze warned");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the unit runs the packaged configuration, which is valid", () => {
  const conf = "/etc/fabricwatch/fabricwatch.toml";
  assert.match(unit, new RegExp(`^ExecStart=/usr/local/bin/fabricwatch serve --config.file=${conf}$`, "m"));
  const r = spawnSync(binary, ["config", "validate", path.join(repoRoot, "deploy/systemd/fabricwatch.toml")], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
