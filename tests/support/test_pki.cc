#include "tests/support/test_pki.h"

#include "tests/support/process.h"

namespace fabricwatch::testing {
namespace {

bool run(std::string& error, const std::vector<std::string>& argv) {
  if (!error.empty()) return false;
  auto r = runCommand(argv);
  if (r.exit_code != 0) {
    error = argv[0] + " " + argv[1] + " failed (exit " + std::to_string(r.exit_code) +
            "): " + r.err + r.out;
    return false;
  }
  return true;
}

}  // namespace

TestPki::TestPki() {
  auto p = [&](const std::string& name) { return dir.path() + "/" + name; };
  ca_crt = p("ca.crt");
  ca_key = p("ca.key");
  server_crt = p("server.crt");
  server_key = p("server.key");
  client_crt = p("client.crt");
  client_key = p("client.key");
  stranger_crt = p("stranger.crt");
  stranger_key = p("stranger.key");
  std::string ec = "ec_paramgen_curve:prime256v1";
  run(error, {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", ec, "-nodes",
              "-keyout", ca_key, "-out", ca_crt, "-days", "2", "-subj", "/CN=fabricwatch test CA"});
  run(error, {"/usr/bin/openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", server_key,
              "-out", p("server.csr"), "-subj", "/CN=localhost"});
  dir.write("server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  run(error,
      {"/usr/bin/openssl", "x509", "-req", "-in", p("server.csr"), "-CA", ca_crt, "-CAkey", ca_key,
       "-CAcreateserial", "-out", server_crt, "-days", "2", "-extfile", p("server.ext")});
  clientWithSan("client", "good-client");
  dir.write("stranger.ext", "subjectAltName=DNS:good-client\n");
  run(error, {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", ec, "-nodes",
              "-keyout", stranger_key, "-out", stranger_crt, "-days", "2", "-subj", "/CN=stranger",
              "-addext", "subjectAltName=DNS:good-client"});
}

std::string TestPki::clientWithSan(const std::string& name, const std::string& san) {
  auto p = [&](const std::string& n) { return dir.path() + "/" + n; };
  std::string ec = "ec_paramgen_curve:prime256v1";
  dir.write(name + ".ext", "subjectAltName=DNS:" + san + "\nextendedKeyUsage=clientAuth\n");
  run(error, {"/usr/bin/openssl", "req", "-newkey", "ec", "-pkeyopt", ec, "-nodes", "-keyout",
              p(name + ".key"), "-out", p(name + ".csr"), "-subj", "/CN=" + name});
  run(error,
      {"/usr/bin/openssl", "x509", "-req", "-in", p(name + ".csr"), "-CA", ca_crt, "-CAkey", ca_key,
       "-CAcreateserial", "-out", p(name + ".crt"), "-days", "2", "-extfile", p(name + ".ext")});
  return p(name);
}

TestPki& TestPki::shared() {
  static TestPki* p = new TestPki();
  return *p;
}

}  // namespace fabricwatch::testing
