#include "http/web_security.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/openssl.h"

namespace fabricwatch::http {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;

// What the verify callback needs, kept with the context (freed with it).
struct VerifySettings {
  bool verify = false;  // check the chain (Verify*), or take any certificate (Request/RequireAny)
  std::vector<std::string> allowed_sans;
};

int settingsIndex() {
  static const int index = SSL_CTX_get_ex_new_index(
      0, nullptr, nullptr, nullptr, [](void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) {
        delete static_cast<VerifySettings*>(ptr);
      });
  return index;
}

std::string opensslError(const std::string& what) {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (!e) return what;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return what + ": " + buf;
}

// Every SAN of the certificate as Go lists them: DNS names, e-mail addresses, IPs, URIs.
std::vector<std::string> subjectAltNames(X509* cert) {
  std::vector<std::string> out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type == GEN_DNS || n->type == GEN_EMAIL || n->type == GEN_URI) {
      const ASN1_IA5STRING* s = n->d.ia5;
      out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                       static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (n->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = n->d.iPAddress;
      char buf[64] = {0};
      int len = ASN1_STRING_length(ip);
      const unsigned char* p = ASN1_STRING_get0_data(ip);
      if (len == 4) {
        snprintf(buf, sizeof buf, "%u.%u.%u.%u", p[0], p[1], p[2], p[3]);
        out.emplace_back(buf);
      } else if (len == 16 && inet_ntop(AF_INET6, p, buf, sizeof buf)) {
        out.emplace_back(buf);
      }
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

int verifyCallback(int preverify_ok, X509_STORE_CTX* store) {
  SSL* ssl =
      static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* settings = ssl ? static_cast<const VerifySettings*>(
                                   SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), settingsIndex()))
                             : nullptr;
  if (!settings) return preverify_ok;
  if (settings->verify && !preverify_ok) return 0;
  if (X509_STORE_CTX_get_error_depth(store) != 0 || settings->allowed_sans.empty()) return 1;
  // The client's own certificate must carry one of the allowed SANs (client_allowed_sans).
  X509* cert = X509_STORE_CTX_get_current_cert(store);
  for (const auto& san : subjectAltNames(cert)) {
    if (std::find(settings->allowed_sans.begin(), settings->allowed_sans.end(), san) !=
        settings->allowed_sans.end())
      return 1;
  }
  X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
  return 0;
}

int noPassword(char*, int, int, void*) { return 0; }  // never prompt on a terminal

struct Builder {
  const WebConfig& cfg;
  const std::string& file;
  WebSecurityLoad& out;

  void problem(const std::string& key, std::string msg) {
    auto it = cfg.positions.find(key);
    int line = it == cfg.positions.end() ? 0 : it->second.first;
    int col = it == cfg.positions.end() ? 0 : it->second.second;
    out.problems.push_back(core::Diagnostic{file, line, col, std::move(msg), ""});
  }

  // A file named by the config: a regular file (a FIFO would block), at most 1 MiB.
  std::optional<std::string> readFile(const std::string& key, const std::string& path) {
    out.files.push_back(path);
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      std::string what = key.find('.') == std::string::npos ? key : key.substr(key.find('.') + 1);
      problem(key, "cannot read " + what + " \"" + path + "\": " + std::strerror(errno));
      return std::nullopt;
    }
    struct stat st {};
    std::string data;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      problem(key, "\"" + path + "\" is not a regular file");
      close(fd);
      return std::nullopt;
    }
    if (static_cast<size_t>(st.st_size) > kMaxFileBytes) {
      problem(key, "\"" + path + "\" is larger than 1 MiB");
      close(fd);
      return std::nullopt;
    }
    data.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < data.size()) {
      ssize_t n = read(fd, data.data() + got, data.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    close(fd);
    data.resize(got);
    return data;
  }

  std::optional<std::string> pem(const std::string& inline_key, const std::string& inline_value,
                                 const std::string& file_key, const std::string& path) {
    if (!path.empty()) return readFile(file_key, path);
    if (!inline_value.empty()) return inline_value;
    (void)inline_key;
    return std::nullopt;
  }

  // Every certificate in a PEM text.
  std::vector<X509*> certificates(const std::string& text) {
    std::vector<X509*> out;
    BIO* bio = BIO_new_mem_buf(text.data(), static_cast<int>(text.size()));
    while (X509* x = PEM_read_bio_X509(bio, nullptr, noPassword, nullptr)) out.push_back(x);
    ERR_clear_error();  // the end of the text reads as an error
    BIO_free(bio);
    return out;
  }

  std::shared_ptr<SSL_CTX> tls(const TlsServerConfig& t) {
    std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
    if (!ctx) {
      problem("tls_server_config", opensslError("cannot create a TLS context"));
      return nullptr;
    }
    SSL_CTX* c = ctx.get();
    size_t before = out.problems.size();
    std::string cert_key =
        t.cert_file.empty() ? "tls_server_config.cert" : "tls_server_config.cert_file";
    std::string key_key =
        t.key_file.empty() ? "tls_server_config.key" : "tls_server_config.key_file";
    auto cert_pem =
        pem("tls_server_config.cert", t.cert, "tls_server_config.cert_file", t.cert_file);
    auto key_pem = pem("tls_server_config.key", t.key, "tls_server_config.key_file", t.key_file);
    if (cert_pem) {
      auto chain = certificates(*cert_pem);
      if (chain.empty()) {
        problem(cert_key,
                "no PEM certificate in " +
                    (t.cert_file.empty() ? std::string("cert") : "\"" + t.cert_file + "\""));
      } else {
        if (SSL_CTX_use_certificate(c, chain[0]) != 1)
          problem(cert_key, opensslError("the certificate does not load"));
        for (size_t i = 1; i < chain.size(); ++i) {
          if (SSL_CTX_add0_chain_cert(c, chain[i]) != 1) X509_free(chain[i]);
          chain[i] = nullptr;
        }
        X509_free(chain[0]);
      }
    }
    if (key_pem) {
      BIO* bio = BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size()));
      EVP_PKEY* pkey = PEM_read_bio_PrivateKey(bio, nullptr, noPassword, nullptr);
      BIO_free(bio);
      if (!pkey) {
        problem(key_key, opensslError("no usable PEM private key (an encrypted key is not "
                                      "supported)"));
      } else {
        if (SSL_CTX_use_PrivateKey(c, pkey) != 1)
          problem(key_key, opensslError("the private key does not load"));
        else if (out.problems.size() == before && SSL_CTX_check_private_key(c) != 1)
          problem(key_key, opensslError("the private key does not match the certificate"));
        EVP_PKEY_free(pkey);
      }
    }
    if (t.requestsClientCert()) {
      std::string ca_key = t.client_ca_file.empty() ? "tls_server_config.client_ca"
                                                    : "tls_server_config.client_ca_file";
      auto ca_pem = pem("tls_server_config.client_ca", t.client_ca,
                        "tls_server_config.client_ca_file", t.client_ca_file);
      if (ca_pem) {
        auto cas = certificates(*ca_pem);
        if (cas.empty()) problem(ca_key, "no PEM certificate in the client CA");
        X509_STORE* store = SSL_CTX_get_cert_store(c);
        for (X509* ca : cas) {
          X509_STORE_add_cert(store, ca);
          SSL_CTX_add_client_CA(c, ca);
          X509_free(ca);
        }
      }
      int mode = SSL_VERIFY_PEER;
      if (t.requiresClientCert()) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
      auto* settings = new VerifySettings{t.verifiesClientCert(), t.client_allowed_sans};
      SSL_CTX_set_ex_data(c, settingsIndex(), settings);
      SSL_CTX_set_verify(c, mode, verifyCallback);
      SSL_CTX_set_verify_depth(c, 8);
    }
    if (SSL_CTX_set_min_proto_version(c, t.min_version) != 1 ||
        SSL_CTX_set_max_proto_version(c, t.max_version) != 1)
      problem("tls_server_config.min_version", opensslError("OpenSSL refuses these TLS versions"));
    std::string tls12, tls13;
    for (const auto& name : t.cipher_suites) {
      bool is13 = false;
      auto o = opensslCipherName(name, &is13);
      if (!o) continue;  // reported by the parser
      std::string& list = is13 ? tls13 : tls12;
      list += (list.empty() ? "" : ":") + *o;
    }
    if (!tls12.empty() && SSL_CTX_set_cipher_list(c, tls12.c_str()) != 1)
      problem("tls_server_config.cipher_suites",
              opensslError("OpenSSL supports none of the TLS 1.2 cipher_suites"));
    if (!tls13.empty() && SSL_CTX_set_ciphersuites(c, tls13.c_str()) != 1)
      problem("tls_server_config.cipher_suites",
              opensslError("OpenSSL supports none of the TLS 1.3 cipher_suites"));
    if (!t.curve_preferences.empty()) {
      std::string groups;
      for (const auto& curve : t.curve_preferences) {
        std::string g = curve == "CurveP256"   ? "P-256"
                        : curve == "CurveP384" ? "P-384"
                        : curve == "CurveP521" ? "P-521"
                                               : "X25519";
        groups += (groups.empty() ? "" : ":") + g;
      }
      if (SSL_CTX_set1_groups_list(c, groups.c_str()) != 1)
        problem("tls_server_config.curve_preferences",
                opensslError("OpenSSL refuses curve_preferences"));
    }
    long opts = SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION;
    if (t.prefer_server_cipher_suites) opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
    SSL_CTX_set_options(c, opts);
    SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
    static const unsigned char kSessionContext[] = "fabricwatch";
    SSL_CTX_set_session_id_context(c, kSessionContext, sizeof kSessionContext - 1);
    if (out.problems.size() != before) return nullptr;
    return ctx;
  }
};

}  // namespace

std::vector<std::string> lessProtection(const WebProtection& before, const WebProtection& after) {
  std::vector<std::string> out;
  auto users = [](size_t n) { return std::to_string(n) + (n == 1 ? " user" : " users"); };
  if (before.users > 0 && after.users == 0)
    out.push_back("basic auth turned off (" + users(before.users) + " before, none now)");
  else if (after.users < before.users)
    // A file cut inside its users' list, or a merge that lost some, looks like this too.
    out.push_back("fewer users (" + users(before.users) + " before, " + users(after.users) +
                  " now)");
  if (before.requires_client_cert && !after.requires_client_cert)
    out.push_back("client certificates no longer required");
  if (before.verifies_client_cert && !after.verifies_client_cert)
    out.push_back("client certificates no longer verified");
  return out;
}

WebSecurityLoad buildWebSecurity(std::string_view text, const std::string& path) {
  WebSecurityLoad out;
  out.files.push_back(path);
  WebConfigParse parsed = parseWebConfig(text, path);
  if (!parsed.problems.empty()) {
    out.problems = std::move(parsed.problems);
    return out;
  }
  const WebConfig& cfg = parsed.config;
  Builder b{cfg, path, out};
  // OpenSSL is loaded here, when the file first asks for TLS or users: a server without either
  // never maps it (core/openssl.h). A host without it gets a configuration problem.
  if (cfg.tls) {
    if (auto st = core::openssl::require("TLS (tls_server_config)"); !st)
      b.problem("tls_server_config", st.message());
  } else if (!cfg.users.empty()) {
    if (auto st = core::openssl::require("basic auth (basic_auth_users)"); !st)
      b.problem("basic_auth_users", st.message());
  }
  if (!out.problems.empty()) return out;
  std::shared_ptr<SSL_CTX> ctx;
  if (cfg.tls) ctx = b.tls(*cfg.tls);
  if (!out.problems.empty()) return out;
  std::unique_ptr<BasicAuth> auth;
  if (!cfg.users.empty()) auth = std::make_unique<BasicAuth>(cfg.users);
  std::optional<WebSecurity::RateLimit> rl;
  if (cfg.rate_limit) rl = WebSecurity::RateLimit{cfg.rate_limit->burst, cfg.rate_limit->interval};
  WebProtection protection;
  protection.tls = cfg.tls.has_value();
  protection.requires_client_cert = cfg.tls && cfg.tls->requiresClientCert();
  protection.verifies_client_cert = cfg.tls && cfg.tls->verifiesClientCert();
  protection.users = cfg.users.size();
  protection.allow_less = cfg.allow_less_protection;
  out.security = std::make_shared<const WebSecurity>(std::move(ctx), std::move(auth), cfg.headers,
                                                     rl, protection);
  return out;
}

WebSecurityLoad loadWebSecurity(const std::string& path) {
  WebSecurityLoad out;
  WebConfig none;
  Builder b{none, path, out};
  auto text = b.readFile("the web configuration", path);
  if (!text) return out;
  return buildWebSecurity(*text, path);
}

}  // namespace fabricwatch::http
