// deploy/kubernetes: every kustomization renders offline, every rendered object is valid for
// the Kubernetes and Prometheus Operator schemas, the DaemonSet keeps the privileges the docs
// describe and no more, and the configuration and packs it ships are valid for the binary.
// Run by CTest (tests/deploy/CMakeLists.txt) as `node --test`; needs kubectl and FW_BINARY.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { parse } from "yaml";
import { kustomizeDirs, render, repoRoot, schemaVersions, validateObjects } from "./validate.mjs";

const deployDir = path.join(repoRoot, "deploy/kubernetes");
const fixturesDir = path.join(repoRoot, "tests/deploy/kustomize");
// Deliberately broken variants, which validation must reject.
const isBroken = (d) => path.basename(d).startsWith("broken-");
const binary = process.env.FW_BINARY || path.join(repoRoot, "build/fabricwatch");

const rendered = new Map(); // dir -> objects
const tmp = mkdtempSync(path.join(os.tmpdir(), "fw-deploy-"));

before(async () => {
  const dirs = [...kustomizeDirs(deployDir), ...kustomizeDirs(fixturesDir)];
  const results = await Promise.all(dirs.map(render));
  dirs.forEach((d, i) => rendered.set(d, results[i]));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

const rel = (d) => path.relative(repoRoot, d);
const find = (objs, kind, prefix = "") =>
  objs.filter((o) => o.kind === kind && o.metadata.name.startsWith(prefix));
// The directories that deploy fabricwatch: the base, every overlay and the combinations.
const deployments = () =>
  [...rendered].filter(([d, objs]) => !isBroken(d) && find(objs, "DaemonSet").length === 1);

test("every kustomization renders with kubectl kustomize", () => {
  assert.ok(rendered.size >= 12, `only ${rendered.size} kustomizations found`);
  for (const [d, objs] of rendered) {
    if (!d.includes("/components/")) assert.ok(objs.length > 0, `${rel(d)} renders nothing`);
  }
});

test(`every rendered object is valid (${schemaVersions()})`, async () => {
  const all = [...rendered].filter(([d]) => !isBroken(d)).flatMap(([, objs]) => objs);
  const problems = await validateObjects(all);
  assert.deepEqual(problems, []);
});

test("a misspelled field is rejected", async () => {
  const problems = await validateObjects(rendered.get(path.join(fixturesDir, "broken-field")));
  assert.equal(problems.length, 1, problems.join("\n"));
  assert.match(problems[0], /^DaemonSet\/fabricwatch at \/spec\/template\/spec\/hostNetwrok: .*'"hostNetwrok"' does not exist in type 'IPodSpec'/);
});

test("a value of the wrong type is rejected", async () => {
  const problems = await validateObjects(rendered.get(path.join(fixturesDir, "broken-type")));
  assert.match(problems.join("\n"), /containerPort must be integer/);
});

describe("the DaemonSet", () => {
  test("passes only flags fabricwatch serve accepts, with values it accepts", () => {
    const help = spawnSync(binary, ["serve", "--help"], { encoding: "utf8" }).stdout;
    let fabric = 0;
    for (const [d, objs] of deployments()) {
      const [command, ...args] = find(objs, "DaemonSet")[0].spec.template.spec.containers[0].args;
      assert.equal(command, "serve", rel(d));
      for (const a of args) {
        const flag = a.split("=")[0];
        assert.ok(help.includes(`  ${flag}=`) || help.includes(`  ${flag} `), `${rel(d)}: ${flag}`);
        if (flag === "--probe.fabric.provider") {
          // Validated as the configuration key it overrides.
          const dir = mkdtempSync(path.join(tmp, "flag-"));
          const file = path.join(dir, "fw.toml");
          writeFileSync(file, `[probes.fabric]\nprovider = "${a.slice(a.indexOf("=") + 1)}"\n`);
          const r = spawnSync(binary, ["config", "validate", file], { encoding: "utf8" });
          assert.equal(r.status, 0, `${rel(d)}: ${a}: ${r.stdout}${r.stderr}`);
          fabric++;
        }
      }
    }
    assert.ok(fabric >= 1, "the EFA fabric probe overlay pins its provider");
  });

  test("runs on the host's network, reads the host read-only, names its node", () => {
    for (const [d, objs] of deployments()) {
      const ds = find(objs, "DaemonSet")[0];
      const pod = ds.spec.template.spec;
      const c = pod.containers[0];
      assert.equal(pod.hostNetwork, true, rel(d));
      assert.equal(pod.dnsPolicy, "ClusterFirstWithHostNet", rel(d));
      assert.ok(c.args.includes("--path.rootfs=/host"), rel(d));
      assert.ok(c.args.includes("--node.name=$(NODE_NAME)"), rel(d));
      const nodeName = c.env.find((e) => e.name === "NODE_NAME");
      assert.equal(nodeName.valueFrom.fieldRef.fieldPath, "spec.nodeName", rel(d));
      const host = pod.volumes.find((v) => v.hostPath?.path === "/");
      const mount = c.volumeMounts.find((m) => m.name === host.name);
      assert.equal(mount.mountPath, "/host", rel(d));
      assert.equal(mount.readOnly, true, rel(d));
      for (const m of c.volumeMounts) {
        const v = pod.volumes.find((x) => x.name === m.name);
        assert.ok(v, `${rel(d)}: mount ${m.name} has no volume`);
        if (v.hostPath) assert.equal(m.readOnly, true, `${rel(d)}: ${m.name} is writable`);
      }
    }
  });

  test("keeps its privileges to those documented", () => {
    for (const [d, objs] of deployments()) {
      const pod = find(objs, "DaemonSet")[0].spec.template.spec;
      const sc = pod.containers[0].securityContext;
      // Privileged only where the fabric probe is on and the devices come from
      // components/fabric-device-access instead of a device plugin's allocation.
      const privileged = sc.privileged === true;
      const args = pod.containers[0].args.join(" ");
      if (privileged) assert.ok(args.includes("--probe.fabric.enabled=true"), rel(d));
      assert.equal(sc.privileged, privileged, rel(d));
      assert.equal(sc.allowPrivilegeEscalation, privileged, rel(d));
      assert.equal(sc.readOnlyRootFilesystem, true, rel(d));
      assert.deepEqual(sc.capabilities.drop, ["ALL"], rel(d));
      const workloads = pod.hostPID === true;
      const allowed = workloads ? ["IPC_LOCK", "SYS_PTRACE", "DAC_READ_SEARCH"] : ["IPC_LOCK"];
      for (const cap of sc.capabilities.add ?? [])
        assert.ok(allowed.includes(cap), `${rel(d)}: capability ${cap}`);
      // hostPID comes only with the workload-facts component, and it needs root.
      assert.equal(workloads, args.includes("/etc/fabricwatch/workloads/"), rel(d));
      if (workloads) assert.equal(sc.runAsUser, 0, rel(d));
      if (sc.runAsNonRoot) assert.deepEqual(sc.capabilities.add, [], rel(d));
    }
    const base = find(rendered.get(deployDir + "/base"), "DaemonSet")[0].spec.template.spec;
    assert.notEqual(base.hostPID, true);
    assert.equal(base.containers[0].securityContext.privileged, false);
    assert.equal(base.containers[0].securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(base.containers[0].securityContext.capabilities.add, ["IPC_LOCK"]);
  });

  test("takes no device or hugepage from the jobs", () => {
    // Resources a device plugin hands out one pod at a time, or that jobs need all of (DGX
    // Cloud's EFA automount asks for all 32 EFA devices and 5Gi of 2 MiB pages): a DaemonSet
    // pod holding any of them keeps such a job Pending. The shared-device plugins' resources
    // are virtual (ack-rdma-device-plugin's shared rdma/hca: 1000 per node) and stay allowed.
    const shared = ["rdma/hca", "rdma/rdma_shared_device_a"];
    let efaProbes = 0;
    for (const [d, objs] of deployments()) {
      const c = find(objs, "DaemonSet")[0].spec.template.spec.containers[0];
      for (const side of ["requests", "limits"]) {
        for (const name of Object.keys(c.resources[side] ?? {})) {
          if (name === "cpu" || name === "memory") continue;
          assert.ok(shared.includes(name), `${rel(d)}: ${side} ${name}`);
        }
      }
      if (c.args.includes("--probe.fabric.provider=efa")) {
        efaProbes++;
        const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
        // Without a hugepages request the EFA provider must not take its buffers from them.
        assert.equal(env.FI_EFA_USE_HUGE_PAGE, "0", rel(d));
        assert.equal(c.securityContext.privileged, true, `${rel(d)}: no device access`);
      }
    }
    assert.ok(efaProbes >= 2, `only ${efaProbes} deployments run the EFA probe`);
  });

  test("has health checks, sizing, tolerations, a priority class and rolling updates", () => {
    for (const [d, objs] of deployments()) {
      const ds = find(objs, "DaemonSet")[0];
      const pod = ds.spec.template.spec;
      const c = pod.containers[0];
      assert.equal(c.livenessProbe.httpGet.path, "/healthz", rel(d));
      assert.equal(c.readinessProbe.httpGet.path, "/readyz", rel(d));
      assert.ok(c.ports.some((p) => p.name === c.livenessProbe.httpGet.port), rel(d));
      for (const k of ["cpu", "memory"]) {
        assert.ok(c.resources.requests[k] && c.resources.limits[k], `${rel(d)}: ${k}`);
      }
      assert.ok(
        pod.tolerations.some((t) => t.key === "nvidia.com/gpu"),
        `${rel(d)}: no GPU toleration`,
      );
      assert.equal(ds.spec.updateStrategy.type, "RollingUpdate", rel(d));
      assert.ok(ds.spec.updateStrategy.rollingUpdate.maxUnavailable, rel(d));
      const pc = find(objs, "PriorityClass")[0];
      assert.equal(pod.priorityClassName, pc.metadata.name, rel(d));
      assert.equal(pc.preemptionPolicy, "Never", rel(d));
      // Every ConfigMap a volume names is rendered; the Secret is the documented one.
      for (const v of pod.volumes) {
        if (v.configMap) assert.equal(find(objs, "ConfigMap", v.configMap.name).length, 1);
        if (v.secret) assert.equal(v.secret.secretName, "fabricwatch-peer-secret");
      }
      assert.equal(find(objs, "Secret").length, 0, `${rel(d)}: a Secret in the repository`);
    }
  });

  test("each overlay selects its nodes and sets a resource group its packs match", () => {
    const globs = { "pai-lingjun": /^lingjun-/, "pai-general-erdma": /^general-/, "aws-efa": /^efa-/,
      "aws-efa-fabric-probe": /^efa-/, infiniband: /^ib-/ };
    for (const [name, glob] of Object.entries(globs)) {
      const objs = rendered.get(path.join(deployDir, "overlays", name));
      assert.ok(objs, `overlay ${name} missing`);
      const pod = find(objs, "DaemonSet")[0].spec.template.spec;
      const group = pod.containers[0].env.find((e) => e.name === "FABRICWATCH_RESOURCE_GROUP");
      assert.match(group.value, glob, name);
      assert.ok(Object.keys(pod.nodeSelector ?? {}).length > 0, `${name}: no nodeSelector`);
      const label = pod.nodeSelector["fabricwatch.io/resource-group"];
      if (label) assert.equal(label, group.value, name);
    }
  });

  test("the peer Service and the monitoring select the DaemonSet's pods", () => {
    for (const [d, objs] of deployments()) {
      const ds = find(objs, "DaemonSet")[0];
      const labels = ds.spec.template.metadata.labels;
      const matches = (sel) => Object.entries(sel).every(([k, v]) => labels[k] === v);
      const svc = find(objs, "Service", "fabricwatch-peers")[0];
      assert.equal(svc.spec.clusterIP, "None", rel(d));
      assert.ok(matches(svc.spec.selector), `${rel(d)}: Service selector`);
      const ports = ds.spec.template.spec.containers[0].ports.map((p) => p.name);
      assert.ok(svc.spec.ports.every((p) => ports.includes(p.targetPort)), rel(d));
      const dns = ds.spec.template.spec.containers[0].args.find((a) =>
        a.startsWith("--probe.dns-name="),
      );
      assert.equal(dns, `--probe.dns-name=${svc.metadata.name}.$(POD_NAMESPACE).svc`, rel(d));
      for (const pm of find(objs, "PodMonitor")) {
        assert.ok(matches(pm.spec.selector.matchLabels), `${rel(d)}: PodMonitor selector`);
        assert.ok(pm.spec.podMetricsEndpoints.every((e) => ports.includes(e.port)), rel(d));
      }
    }
    // The plain Prometheus job finds the same pods and port.
    const base = rendered.get(deployDir + "/base");
    const ds = find(base, "DaemonSet")[0];
    const job = parse(readFileSync(path.join(deployDir, "prometheus-scrape-config.yaml"), "utf8"))
      .scrape_configs[0];
    const sd = job.kubernetes_sd_configs[0];
    assert.deepEqual(sd.namespaces.names, [ds.metadata.namespace]);
    const [k, v] = sd.selectors[0].label.split("=");
    assert.equal(ds.spec.template.metadata.labels[k], v);
    const keep = job.relabel_configs.find((r) => r.action === "keep");
    assert.ok(ds.spec.template.spec.containers[0].ports.some((p) => p.name === keep.regex));
  });
});

describe("what the ConfigMaps ship", () => {
  const run = (args) => spawnSync(binary, args, { encoding: "utf8" });
  const written = (objs, prefix) =>
    find(objs, "ConfigMap", prefix).flatMap((cm) =>
      Object.entries(cm.data ?? {}).map(([key, text]) => {
        const dir = mkdtempSync(path.join(tmp, "cm-"));
        const file = path.join(dir, key);
        writeFileSync(file, text);
        return file;
      }),
    );

  test("every configuration file is valid for fabricwatch config validate", () => {
    let n = 0;
    for (const [d, objs] of deployments()) {
      for (const f of [...written(objs, "fabricwatch-config"), ...written(objs, "fabricwatch-workloads-config")]) {
        const r = run(["config", "validate", f]);
        assert.equal(r.status, 0, `${rel(d)}: ${r.stdout}${r.stderr}`);
        n++;
      }
    }
    assert.ok(n >= 8);
  });

  test("the workload configuration is the base one plus the workloads source", () => {
    const strip = (t) => t.split("\n").filter((l) => !l.startsWith("#")).join("\n").trim();
    const base = readFileSync(path.join(deployDir, "base/fabricwatch.toml"), "utf8");
    const wl = readFileSync(path.join(deployDir, "components/workloads/workloads.toml"), "utf8");
    assert.equal(strip(wl), `${strip(base)}\n\n[collect.sources.workloads]\nenabled = true`);
  });

  test("every site pack is valid, and the Lingjun one finds a missing NIC", () => {
    let n = 0;
    for (const [d, objs] of deployments()) {
      for (const f of written(objs, "fabricwatch-packs")) {
        const r = run(["policy", "validate", f]);
        assert.equal(r.status, 0, `${rel(d)}: ${r.stdout}${r.stderr}`);
        n++;
      }
    }
    assert.ok(n >= 1);
    const packs = written(rendered.get(path.join(deployDir, "overlays/pai-lingjun")), "fabricwatch-packs");
    // The RoCE fixture has two mlx5 devices; the site pack expects four.
    const r = run(["check", `--path.rootfs=${path.join(repoRoot, "tests/fixtures/roce_v2")}`,
      `--policy.path=${packs.join(",")}`, "--resource-group=lingjun-gu8xf", "--format=json"]);
    assert.equal(r.status, 1, r.stderr);
    const rules = JSON.parse(r.stdout).violations.map((v) => `${v.pack}/${v.rule}`);
    assert.ok(rules.includes("lingjun-site/rdma-device-count"), rules.join(" "));
  });
});

test("kubectl's kustomize knows Components (v3.7 and later)", () => {
  const v = execFileSync("kubectl", ["version", "--client"], { encoding: "utf8" });
  assert.match(v, /Kustomize Version: v([4-9]|3\.([7-9]|\d\d))/);
});
