#pragma once
// Every OpenSSL function fabricwatch calls, as one X-macro list:
//   X(return type, name, (parameters), (arguments))
// with the prototypes of OpenSSL 3's headers (the trampolines' definitions are checked against
// them). Many of OpenSSL's "functions" are macros over these (SSL_CTX_set_mode and
// SSL_CTX_set_min_proto_version over SSL_CTX_ctrl, sk_GENERAL_NAME_num over OPENSSL_sk_num,
// SSL_CTX_get_ex_new_index over CRYPTO_get_ex_new_index): linking fw_core_openssl's users
// without it lists exactly the real symbols needed. Internal to core/openssl*.cc.

#define FW_OPENSSL_FUNCTIONS(X)                                                                   \
  /* libcrypto: errors */                                                                         \
  X(unsigned long, ERR_get_error, (void), ())                                                     \
  X(unsigned long, ERR_peek_last_error, (void), ())                                               \
  X(void, ERR_clear_error, (void), ())                                                            \
  X(void, ERR_error_string_n, (unsigned long e, char* buf, size_t len), (e, buf, len))            \
  /* libcrypto: HMAC-SHA256 and constant-time helpers (peer frames, basic-auth cache) */          \
  X(const EVP_MD*, EVP_sha256, (void), ())                                                        \
  X(unsigned char*, HMAC,                                                                         \
    (const EVP_MD* evp_md, const void* key, int key_len, const unsigned char* data,               \
     size_t data_len, unsigned char* md, unsigned int* md_len),                                   \
    (evp_md, key, key_len, data, data_len, md, md_len))                                           \
  X(int, CRYPTO_memcmp, (const void* a, const void* b, size_t len), (a, b, len))                  \
  X(void, OPENSSL_cleanse, (void* ptr, size_t len), (ptr, len))                                   \
  X(int, CRYPTO_get_ex_new_index,                                                                 \
    (int class_index, long argl, void* argp, CRYPTO_EX_new* new_func, CRYPTO_EX_dup* dup_func,    \
     CRYPTO_EX_free* free_func),                                                                  \
    (class_index, argl, argp, new_func, dup_func, free_func))                                     \
  /* libcrypto: PEM, certificates and keys */                                                     \
  X(BIO*, BIO_new_mem_buf, (const void* buf, int len), (buf, len))                                \
  X(int, BIO_free, (BIO * a), (a))                                                                \
  X(X509*, PEM_read_bio_X509, (BIO * bp, X509 * *x, pem_password_cb * cb, void* u),               \
    (bp, x, cb, u))                                                                               \
  X(EVP_PKEY*, PEM_read_bio_PrivateKey, (BIO * bp, EVP_PKEY * *x, pem_password_cb * cb, void* u), \
    (bp, x, cb, u))                                                                               \
  X(void, X509_free, (X509 * a), (a))                                                             \
  X(void, EVP_PKEY_free, (EVP_PKEY * pkey), (pkey))                                               \
  X(void*, X509_get_ext_d2i, (const X509* x, int nid, int* crit, int* idx), (x, nid, crit, idx))  \
  X(void, GENERAL_NAMES_free, (GENERAL_NAMES * a), (a))                                           \
  X(int, OPENSSL_sk_num, (const OPENSSL_STACK* st), (st))                                         \
  X(void*, OPENSSL_sk_value, (const OPENSSL_STACK* st, int i), (st, i))                           \
  X(const unsigned char*, ASN1_STRING_get0_data, (const ASN1_STRING* x), (x))                     \
  X(int, ASN1_STRING_length, (const ASN1_STRING* x), (x))                                         \
  X(int, X509_STORE_add_cert, (X509_STORE * xs, X509 * x), (xs, x))                               \
  X(void*, X509_STORE_CTX_get_ex_data, (const X509_STORE_CTX* ctx, int idx), (ctx, idx))          \
  X(int, X509_STORE_CTX_get_error_depth, (const X509_STORE_CTX* ctx), (ctx))                      \
  X(X509*, X509_STORE_CTX_get_current_cert, (const X509_STORE_CTX* ctx), (ctx))                   \
  X(void, X509_STORE_CTX_set_error, (X509_STORE_CTX * ctx, int s), (ctx, s))                      \
  /* libssl: the server's context */                                                              \
  X(const SSL_METHOD*, TLS_server_method, (void), ())                                             \
  X(SSL_CTX*, SSL_CTX_new, (const SSL_METHOD* meth), (meth))                                      \
  X(void, SSL_CTX_free, (SSL_CTX * ctx), (ctx))                                                   \
  X(long, SSL_CTX_ctrl, (SSL_CTX * ctx, int cmd, long larg, void* parg), (ctx, cmd, larg, parg))  \
  X(uint64_t, SSL_CTX_set_options, (SSL_CTX * ctx, uint64_t op), (ctx, op))                       \
  X(int, SSL_CTX_use_certificate, (SSL_CTX * ctx, X509 * x), (ctx, x))                            \
  X(int, SSL_CTX_use_PrivateKey, (SSL_CTX * ctx, EVP_PKEY * pkey), (ctx, pkey))                   \
  X(int, SSL_CTX_check_private_key, (const SSL_CTX* ctx), (ctx))                                  \
  X(X509_STORE*, SSL_CTX_get_cert_store, (const SSL_CTX* ctx), (ctx))                             \
  X(int, SSL_CTX_add_client_CA, (SSL_CTX * ctx, X509 * x), (ctx, x))                              \
  X(int, SSL_CTX_set_ex_data, (SSL_CTX * ctx, int idx, void* data), (ctx, idx, data))             \
  X(void*, SSL_CTX_get_ex_data, (const SSL_CTX* ctx, int idx), (ctx, idx))                        \
  X(void, SSL_CTX_set_verify, (SSL_CTX * ctx, int mode, SSL_verify_cb callback),                  \
    (ctx, mode, callback))                                                                        \
  X(void, SSL_CTX_set_verify_depth, (SSL_CTX * ctx, int depth), (ctx, depth))                     \
  X(int, SSL_CTX_set_cipher_list, (SSL_CTX * ctx, const char* str), (ctx, str))                   \
  X(int, SSL_CTX_set_ciphersuites, (SSL_CTX * ctx, const char* str), (ctx, str))                  \
  X(int, SSL_CTX_set_session_id_context,                                                          \
    (SSL_CTX * ctx, const unsigned char* sid_ctx, unsigned int sid_ctx_len),                      \
    (ctx, sid_ctx, sid_ctx_len))                                                                  \
  X(int, SSL_get_ex_data_X509_STORE_CTX_idx, (void), ())                                          \
  /* libssl: connections */                                                                       \
  X(SSL*, SSL_new, (SSL_CTX * ctx), (ctx))                                                        \
  X(void, SSL_free, (SSL * ssl), (ssl))                                                           \
  X(SSL_CTX*, SSL_get_SSL_CTX, (const SSL* ssl), (ssl))                                           \
  X(int, SSL_set_fd, (SSL * s, int fd), (s, fd))                                                  \
  X(void, SSL_set_accept_state, (SSL * s), (s))                                                   \
  X(int, SSL_do_handshake, (SSL * s), (s))                                                        \
  X(int, SSL_get_error, (const SSL* s, int ret_code), (s, ret_code))                              \
  X(int, SSL_read_ex, (SSL * ssl, void* buf, size_t num, size_t* readbytes),                      \
    (ssl, buf, num, readbytes))                                                                   \
  X(int, SSL_write_ex, (SSL * s, const void* buf, size_t num, size_t* written),                   \
    (s, buf, num, written))                                                                       \
  X(int, SSL_shutdown, (SSL * s), (s))

namespace fabricwatch::core::openssl::detail {

#define FW_OPENSSL_ENUM(ret, name, params, args) k_##name,
enum Function : int { FW_OPENSSL_FUNCTIONS(FW_OPENSSL_ENUM) kFunctionCount };
#undef FW_OPENSSL_ENUM

// The resolved address of `f`; aborts with its name when no require() has succeeded.
void* address(Function f, const char* name);

}  // namespace fabricwatch::core::openssl::detail
