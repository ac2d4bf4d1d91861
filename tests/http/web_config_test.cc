// The web configuration parser against exporter-toolkit's testdata (web/testdata/*.yml, the
// TestYAMLFiles table): the same files parse or fail, and failures are positioned.
#include "http/web_config.h"

#include <gtest/gtest.h>

namespace fabricwatch::http {
namespace {

const std::string kFile = "/etc/fw/web.yml";
const std::string kHash = "$2y$10$qRTBuFoULoYNA7AQ/F3ck.trZBPyjV64.oA4ZsSBCIWvXuvQlQTuu";

WebConfigParse parse(const std::string& text) { return parseWebConfig(text, kFile); }

// The first problem as "LINE:COL: message".
std::string problem(const std::string& text) {
  auto r = parse(text);
  if (r.problems.empty()) return "";
  const auto& d = r.problems.front();
  return std::to_string(d.line) + ":" + std::to_string(d.column) + ": " + d.message;
}

TEST(WebConfigTest, EmptyFileIsPlainHttpWithoutAuth) {
  for (const char* text : {"", "# nothing\n", "---\n"}) {
    auto r = parse(text);
    EXPECT_TRUE(r.problems.empty()) << text;
    EXPECT_FALSE(r.config.tls);
    EXPECT_TRUE(r.config.users.empty());
  }
  // tls_server_config without any key is no TLS (the toolkit's errNoTLSConfig).
  EXPECT_FALSE(parse("tls_server_config:\n").config.tls);
}

TEST(WebConfigTest, ReadsEveryToolkitKey) {
  auto r = parse(R"(tls_server_config:
  cert_file: server.crt
  key_file: /abs/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: "ca.pem"
  min_version: TLS13
  max_version: TLS13
  cipher_suites: [TLS_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
  curve_preferences: [X25519, CurveP256]
  prefer_server_cipher_suites: false
  client_allowed_sans: [one, two]
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000; includeSubDomains
basic_auth_users:
  carol: )" + kHash +
                 R"(
rate_limit:
  burst: 5
  interval: 1s
)");
  ASSERT_TRUE(r.problems.empty()) << r.problems.front().format();
  ASSERT_TRUE(r.config.tls);
  const auto& t = *r.config.tls;
  EXPECT_EQ(t.cert_file, "/etc/fw/server.crt");  // relative to the web config's directory
  EXPECT_EQ(t.key_file, "/abs/server.key");
  EXPECT_EQ(t.client_ca_file, "/etc/fw/ca.pem");
  EXPECT_EQ(t.client_auth_type, "RequireAndVerifyClientCert");
  EXPECT_TRUE(t.verifiesClientCert());
  EXPECT_TRUE(t.requiresClientCert());
  EXPECT_EQ(t.min_version, 0x0304);
  EXPECT_EQ(t.max_version, 0x0304);
  EXPECT_EQ(t.cipher_suites.size(), 2u);
  EXPECT_EQ(t.curve_preferences, (std::vector<std::string>{"X25519", "CurveP256"}));
  EXPECT_FALSE(t.prefer_server_cipher_suites);
  EXPECT_EQ(t.client_allowed_sans, (std::vector<std::string>{"one", "two"}));
  EXPECT_FALSE(r.config.http2);
  EXPECT_EQ(r.config.headers.size(), 2u);
  EXPECT_EQ(r.config.users.at("carol"), kHash);
  ASSERT_TRUE(r.config.rate_limit);
  EXPECT_EQ(r.config.rate_limit->burst, 5);
  EXPECT_EQ(r.config.rate_limit->interval, std::chrono::seconds(1));
}

TEST(WebConfigTest, ClientAuthTypesOfTheToolkit) {
  auto type = [](const std::string& v) {
    auto r = parse(
        "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n"
        "  client_auth_type: " +
        v + "\n");
    return r.problems.empty() ? r.config.tls->client_auth_type : "error";
  };
  EXPECT_EQ(type("RequestClientCert"), "RequestClientCert");
  EXPECT_EQ(type("RequireAnyClientCert"), "RequireAnyClientCert");
  EXPECT_EQ(type("RequireClientCert"), "RequireAnyClientCert");  // kept for compatibility
  EXPECT_EQ(type("VerifyClientCertIfGiven"), "VerifyClientCertIfGiven");
  EXPECT_EQ(type("RequireAndVerifyClientCert"), "RequireAndVerifyClientCert");
  EXPECT_EQ(type("Sometimes"), "error");
  // NoClientCert with a CA is the toolkit's "client CA's ... without a Client Auth Policy".
  EXPECT_EQ(type("NoClientCert"), "error");
  // web_config_noAuth.good.yml: VerifyClientCertIfGiven without a CA is accepted.
  EXPECT_TRUE(parse("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                    "  client_auth_type: VerifyClientCertIfGiven\n")
                  .problems.empty());
}

TEST(WebConfigTest, ToolkitBadFilesFailWithPositions) {
  struct Case {
    const char* name;
    std::string text;
    std::string want;  // "LINE:COL: start of the message"
  };
  std::vector<Case> cases = {
      {"web_config_junk.yml", "hello: [world\n", "2:1: YAML syntax error"},
      {"web_config_junk_key.yml", "tls_server_config:\n  cert_filse: \"server.crt\"\n",
       "2:3: unknown field \"cert_filse\" in tls_server_config"},
      {"web_config_noAuth_certPath_empty.bad.yml",
       "tls_server_config:\n  cert_file: \"\"\n  key_file: \"server.key\"\n",
       "2:3: missing one of cert or cert_file"},
      {"web_config_noAuth_keyPath_empty.bad.yml",
       "tls_server_config:\n  cert_file: \"server.crt\"\n  key_file: \"\"\n",
       "2:3: missing one of key or key_file"},
      {"web_config_noAuth.bad.yml",
       "tls_server_config:\n  cert_file: \"server.crt\"\n  key_file: \"server.key\"\n"
       "  client_ca_file: \"/dev/null\"\n",
       "4:19: client CA's have been configured without a Client Auth Policy"},
      {"invalid ClientAuth",
       "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Maybe\n",
       "4:21: invalid ClientAuth: \"Maybe\""},
      {"web_config_auth_user_list_invalid.bad.yml",
       "tls_server_config:\n  cert_file: \"server.crt\"\n  key_file: \"server.key\"\n"
       "basic_auth_users:\n  john: doe\n",
       "5:9: the password of user \"john\" is not a bcrypt hash"},
      {"web_config_noAuth_inventedCiphers.bad.yml",
       "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites:\n"
       "  - TLS_RSA_WITH_NULL_SHA\n",
       "5:5: unknown cipher: \"TLS_RSA_WITH_NULL_SHA\""},
      {"web_config_noAuth_inventedCurves.bad.yml",
       "tls_server_config:\n  cert_file: a\n  key_file: b\n  curve_preferences:\n"
       "  - CurveP257\n",
       "5:5: unknown curve: \"CurveP257\""},
      {"web_config_noAuth_wrongTLSVersion.bad.yml",
       "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS111\n",
       "4:16: unknown TLS version: \"TLS111\""},
      {"min above max",
       "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n"
       "  max_version: TLS12\n",
       "4:16: min_version is above max_version"},
      {"web_config_headers_content_type_options.bad.yml",
       "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff,nosniff\n",
       "3:29: invalid value for X-Content-Type-Options"},
      {"web_config_headers_frame_options.bad.yml",
       "http_server_config:\n  headers:\n    X-Frame-Options: sameorigin2\n",
       "3:22: invalid value for X-Frame-Options"},
      {"web_config_headers_extra_header.bad.yml",
       "http_server_config:\n  headers:\n    Custom-Header: Custom-Value\n",
       "3:5: HTTP header \"Custom-Header\" can not be configured"},
      {"verify without a CA",
       "tls_server_config:\n  cert_file: a\n  key_file: b\n"
       "  client_auth_type: RequireAndVerifyClientCert\n",
       "4:21: RequireAndVerifyClientCert needs client_ca_file"},
      {"SANs without client certificates",
       "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_allowed_sans: [x]\n",
       "4:24: client_allowed_sans needs a client_auth_type"},
      {"unknown top-level key", "tls_config:\n  cert_file: a\n",
       "1:1: unknown field \"tls_config\" in the web configuration"},
      {"user name with a colon", "basic_auth_users:\n  \"a:b\": " + kHash + "\n",
       "2:3: user name \"a:b\" contains ':'"},
      {"duplicate user", "basic_auth_users:\n  a: " + kHash + "\n  a: " + kHash + "\n",
       "3:3: duplicate user \"a\""},
      {"rate limit", "rate_limit:\n  burst: -1\n  interval: 1s\n",
       "2:10: rate_limit.burst must be an integer"},
  };
  for (const auto& c : cases) {
    std::string got = problem(c.text);
    EXPECT_EQ(got.substr(0, c.want.size()), c.want) << c.name << ": " << got;
    EXPECT_FALSE(parse(c.text).config.tls) << c.name << ": a bad file yields no settings";
  }
}

TEST(WebConfigTest, ProblemsNameTheFileAndShowTheLine) {
  auto r = parse("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS111\n");
  ASSERT_EQ(r.problems.size(), 1u);
  std::string text = r.problems.front().format();
  EXPECT_EQ(text.rfind(kFile + ":4:16: unknown TLS version", 0), 0u) << text;
  EXPECT_NE(text.find("  min_version: TLS111"), std::string::npos) << text;
}

TEST(WebConfigTest, AllToolkitCiphersAreKnown) {
  // web_config_noAuth_allCiphers.good.yml
  auto r = parse(R"(tls_server_config:
  cert_file: "server.crt"
  key_file: "server.key"
  client_auth_type: "VerifyClientCertIfGiven"
  cipher_suites:
  - TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
  - TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
  - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
  - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
  - TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
  - TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
  - TLS_AES_128_GCM_SHA256
  - TLS_AES_256_GCM_SHA384
  - TLS_CHACHA20_POLY1305_SHA256
  - TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA
  - TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA
  - TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA
  - TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA
)");
  EXPECT_TRUE(r.problems.empty()) << r.problems.front().format();
  bool tls13 = false;
  EXPECT_EQ(opensslCipherName("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", &tls13),
            "ECDHE-RSA-AES128-GCM-SHA256");
  EXPECT_FALSE(tls13);
  EXPECT_EQ(opensslCipherName("TLS_AES_256_GCM_SHA384", &tls13), "TLS_AES_256_GCM_SHA384");
  EXPECT_TRUE(tls13);
}

TEST(WebConfigTest, AliasesDoNotMultiplyWork) {
  // Nested aliases where a string or a list of strings belongs: refused as such, in time
  // linear in the text (nothing here walks a node it did not expect).
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c, ++prev)
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" +
            prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
  bomb += "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: *j\n";
  auto r = parse(bomb);
  EXPECT_FALSE(r.problems.empty());
  EXPECT_LE(r.problems.size(), 50u);
}

TEST(WebConfigTest, TextThatYamlCppReadsAsNothingIsAnErrorNotAnEmptyFile) {
  // yaml-cpp 0.7's YAML::Load returns null for a whole text whose document starts with a stray
  // flow token; read as an empty file, this one turned basic auth (and TLS) off without a word.
  for (std::string lead : {",", "]", "}"}) {
    std::string text = lead + "\nbasic_auth_users:\n  carol: " + kHash + "\n";
    auto r = parse(text);
    ASSERT_FALSE(r.problems.empty()) << lead << ": read as an empty file";
    EXPECT_EQ(r.problems.front().line, 1) << r.problems.front().format();
    EXPECT_NE(r.problems.front().message.find("YAML"), std::string::npos)
        << r.problems.front().format();
  }
}

TEST(WebConfigTest, NestingAndAliasesAreBoundedLikeEveryYamlInput) {
  // The bounded loader (core/yaml_load.h) reads it: far nesting is refused with its position
  // before anything walks it.
  std::string deep =
      "basic_auth_users:\n  a: " + std::string(200, '[') + std::string(200, ']') + "\n";
  auto r = parse(deep);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems.front().message.find("nested deeper"), std::string::npos)
      << r.problems.front().format();
  EXPECT_EQ(r.problems.front().line, 2);
}

}  // namespace
}  // namespace fabricwatch::http
