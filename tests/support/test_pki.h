#pragma once
// A throw-away PKI for TLS tests, made by the openssl command line: a CA, a server certificate
// for localhost and 127.0.0.1 signed by it, a client certificate signed by it (SAN DNS
// "good-client") and a self-signed client certificate with the same SAN that no CA vouches for.

#include <string>

#include "tests/support/temp_dir.h"

namespace fabricwatch::testing {

struct TestPki {
  TempDir dir;
  std::string ca_crt, ca_key;
  std::string server_crt, server_key;      // RSA 2048: the ECDHE-RSA suites apply
  std::string client_crt, client_key;      // signed by the CA
  std::string stranger_crt, stranger_key;  // self-signed
  std::string error;                       // set when openssl failed

  TestPki();
  // Another client certificate signed by the CA, with `san` as its DNS SAN.
  std::string clientWithSan(const std::string& name, const std::string& san);
};

}  // namespace fabricwatch::testing
