// deploy/docker: no Docker engine here, so the image is checked by its parts. The build stage
// installs what scripts/dev builds with, the runtime stage exactly the packages of the
// libraries the built binary links, and the sources it COPYs configure a build on their own.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "./validate.mjs";

const binary = process.env.FW_BINARY || path.join(repoRoot, "build/fabricwatch");
const dockerfile = (name) => readFileSync(path.join(repoRoot, "deploy/docker", name), "utf8");

// Stages of a Dockerfile with their instructions, continuation lines joined.
function stages(text) {
  const lines = text.replace(/\\\n/g, " ").split("\n").map((l) => l.trim());
  const out = [];
  for (const l of lines) {
    if (!l || l.startsWith("#")) continue;
    const m = l.match(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i);
    if (m) out.push({ image: m[1], name: m[2], instructions: [] });
    else if (out.length) out.at(-1).instructions.push(l);
  }
  return out;
}

// The packages an `apt-get install` in the stage names.
function aptPackages(stage) {
  const run = stage.instructions.find((i) => /apt-get install/.test(i));
  const after = run.split(/apt-get install/)[1].split("&&")[0];
  // $(...) command substitutions are not package names.
  const words = after.replace(/\$\([^)]*\)/g, " ").split(/\s+/);
  return words.filter((w) => w && !w.startsWith("-"));
}

// scripts/dev's BUILD_PACKAGES array.
function buildPackages() {
  const dev = readFileSync(path.join(repoRoot, "scripts/dev"), "utf8");
  const m = dev.match(/^BUILD_PACKAGES=\(([^)]*)\)/m);
  return m[1].split(/\s+/).filter(Boolean);
}

const SANITIZER_RUNTIME = /lib(asan|ubsan|tsan|lsan)/;
const sanitized = () => SANITIZER_RUNTIME.test(execFileSync("ldd", [binary], { encoding: "utf8" }));

// Debian packages of the shared libraries the binary links. The suite also runs on sanitizer
// builds: their runtimes aside, and aside the C++ runtime they keep shared (the shipped binary
// links libstdc++ and libgcc statically, cmake/StaticDeps.cmake).
function linkedPackages() {
  const ldd = execFileSync("ldd", [binary], { encoding: "utf8" });
  const keptShared = SANITIZER_RUNTIME.test(ldd) ? ["libstdc++6", "libgcc-s1"] : [];
  const pkgs = new Set();
  for (const line of ldd.split("\n")) {
    const m = line.match(/=>\s+(\/\S+)/);
    if (!m || SANITIZER_RUNTIME.test(m[1])) continue;
    let owner = spawnSync("dpkg", ["-S", m[1]], { encoding: "utf8" });
    if (owner.status !== 0) owner = spawnSync("dpkg", ["-S", realpathSync(m[1])], { encoding: "utf8" });
    assert.equal(owner.status, 0, `no package owns ${m[1]}`);
    const pkg = owner.stdout.split(":")[0];
    if (!keptShared.includes(pkg)) pkgs.add(pkg);
  }
  return [...pkgs].sort();
}

for (const name of ["Dockerfile", "Dockerfile.cuda"]) {
  test(`${name}: the build stage installs scripts/dev's build packages`, () => {
    const [build] = stages(dockerfile(name));
    assert.deepEqual(aptPackages(build).sort(), buildPackages().sort());
  });

  test(`${name}: the runtime stage runs the built binary as a non-root user`, () => {
    const s = stages(dockerfile(name));
    const runtime = s.at(-1);
    const user = runtime.instructions.find((i) => i.startsWith("USER"));
    assert.ok(user && !/USER\s+(0|root)\b/.test(user), user);
    const copy = `COPY --from=${s[0].name} /build/fabricwatch /usr/local/bin/fabricwatch`;
    assert.ok(runtime.instructions.includes(copy), copy);
    assert.ok(runtime.instructions.includes('ENTRYPOINT ["/usr/local/bin/fabricwatch"]'));
  });
}

// Packages of libraries loaded at run time rather than linked, so ldd does not list them: the
// allow-list, each with its reason.
const RUNTIME_LOADED = {
  libfabric1: "the fabric probe dlopen()s libfabric.so.1 (probes/kinds/fabric/libfabric.h)",
  libibverbs1: "the verbs source dlopen()s libibverbs.so.1 (facts/verbs_query.cc)",
  "ibverbs-providers": "libibverbs loads its device drivers (mlx5, efa, erdma ...) at run time",
  libssl3: "TLS and basic auth (--web.config.file) and the peer mesh's HMAC dlopen() libssl.so.3, " +
    "which brings libcrypto.so.3 (core/openssl.h)",
  libcurl4: "`fabricwatch diagnose` dlopen()s libcurl.so.4 to ask Prometheus (fleet/http_get.h)",
  lldpd: "the topology source dlopen()s liblldpctl.so.4, which Debian ships only in lldpd " +
    "(facts/lldp_client.h)",
};

test("Dockerfile: the runtime stage installs exactly the linked libraries' packages and the run-time loaded ones", () => {
  const runtime = stages(dockerfile("Dockerfile")).at(-1);
  const want = [...new Set([...linkedPackages(), ...Object.keys(RUNTIME_LOADED)])].sort();
  assert.deepEqual(aptPackages(runtime).sort(), want);
});

test("the binary does not link libfabric: it is loaded when the fabric probe runs", () => {
  const ldd = execFileSync("ldd", [binary], { encoding: "utf8" });
  assert.doesNotMatch(ldd, /libfabric/);
});

test("the binary links libstdc++ and libgcc statically (no C++ shared library in its link)", (t) => {
  if (sanitized()) return t.skip("a sanitizer build keeps the shared C++ runtime");
  const ldd = execFileSync("ldd", [binary], { encoding: "utf8" });
  assert.doesNotMatch(ldd, /libstdc\+\+|libgcc_s|libprometheus/);
});

test("the binary does not link libssl or libcrypto: they are loaded when TLS, users or the mesh need them", () => {
  const ldd = execFileSync("ldd", [binary], { encoding: "utf8" });
  assert.doesNotMatch(ldd, /libssl|libcrypto/);
});

test("the binary does not link libcurl: it is loaded when diagnose asks Prometheus", () => {
  const ldd = execFileSync("ldd", [binary], { encoding: "utf8" });
  assert.doesNotMatch(ldd, /libcurl/);
});

test("Dockerfile.cuda: the runtime stage adds NCCL to the linked libraries' packages", () => {
  const runtime = stages(dockerfile("Dockerfile.cuda")).at(-1);
  assert.match(runtime.image, /^nvidia\/cuda:.*runtime/);
  assert.deepEqual(aptPackages(runtime), ["libnccl2", ...Object.keys(RUNTIME_LOADED)]);
  assert.ok(runtime.instructions.some((i) => i.includes("$(cat /tmp/runtime-packages.txt)")));
});

test("the files the build stages COPY exist and configure a build on their own", () => {
  const [build] = stages(dockerfile("Dockerfile"));
  const copies = build.instructions
    .filter((i) => i.startsWith("COPY ") && !i.startsWith("COPY --from"))
    .map((i) => i.split(/\s+/).slice(1, -1))
    .flat();
  for (const name of ["Dockerfile.cuda"]) {
    const other = stages(dockerfile(name))[0].instructions.filter((i) => i.startsWith("COPY "));
    assert.deepEqual(other, build.instructions.filter((i) => i.startsWith("COPY ")), name);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "fw-docker-"));
  try {
    for (const src of copies) {
      assert.ok(existsSync(path.join(repoRoot, src)), `COPY ${src}: no such file`);
      cpSync(path.join(repoRoot, src), path.join(dir, "src", src), { recursive: true });
    }
    const r = spawnSync("cmake", ["-S", path.join(dir, "src"), "-B", path.join(dir, "build"),
      "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DFW_BUILD_TESTS=OFF"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
