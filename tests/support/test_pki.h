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

  // One PKI for the whole test binary (openssl takes a while); never destroyed.
  static TestPki& shared();
};

// Basic-auth users for web configurations in tests, bcrypt at cost 4 (fast): alice's password
// is alice123, bob's bob123.
inline const std::string kAliceHash =
    "$2b$04$/VmcFewbUeMitGpmNp0Q2ui3ZCnvyylYY4EP6nFiADaXmAlteVxJm";
inline const std::string kBobHash = "$2b$04$bRN2fmEQvDHL147ENM3qMOGdc3C0akHjJIdeYAin/Ye0Igtts7ySu";

}  // namespace fabricwatch::testing
