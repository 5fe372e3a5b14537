/* What OpenSSL itself keeps for one idle TLS 1.3 server connection.
 *
 * N server connections each finish a handshake with an in-process client over memory BIOs,
 * read one small request, write a 1,500-byte answer, and are kept with their BIOs swapped for
 * null ones (so only OpenSSL's own state is left); the clients are freed. Printed: malloc's
 * in-use bytes per kept connection (mallinfo2, before and after), and every allocation the last
 * connection still holds, by OpenSSL source line (CRYPTO_set_mem_functions).
 *
 * Built and run by openssl_floor.sh; argument: N (default 2000).
 */
#include <malloc.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRACKED 100000

struct alloc { void *ptr; size_t len; const char *file; int line; };
static struct alloc tracked[MAX_TRACKED];
static int n_tracked;
static int tracking;

static void track(void *ptr, size_t len, const char *file, int line) {
  if (!tracking || !ptr) return;
  if (n_tracked == MAX_TRACKED) { fprintf(stderr, "too many allocations to track\n"); exit(1); }
  tracked[n_tracked++] = (struct alloc){ptr, len, file, line};
}

static struct alloc *find(void *ptr) {
  for (int i = n_tracked - 1; i >= 0; i--)
    if (tracked[i].ptr == ptr) return &tracked[i];
  return NULL;
}

static void *on_malloc(size_t len, const char *file, int line) {
  void *p = malloc(len);
  track(p, len, file, line);
  return p;
}

static void *on_realloc(void *old, size_t len, const char *file, int line) {
  void *p = realloc(old, len);
  struct alloc *a = old ? find(old) : NULL;
  if (a) *a = (struct alloc){p, len, file, line};
  else track(p, len, file, line);
  return p;
}

static void on_free(void *ptr, const char *file, int line) {
  (void)file; (void)line;
  struct alloc *a = ptr ? find(ptr) : NULL;
  if (a) a->ptr = NULL;
  free(ptr);
}

static void die(const char *what) {
  fprintf(stderr, "%s failed\n", what);
  ERR_print_errors_fp(stderr);
  exit(1);
}

/* Moves whatever `from` wrote into `to`. */
static void pump(BIO *from, BIO *to) {
  char buf[16384];
  int n;
  while ((n = BIO_read(from, buf, sizeof buf)) > 0)
    if (BIO_write(to, buf, n) != n) die("BIO_write");
}

/* One connection: handshake, a request in, an answer out; returns the server side. */
static SSL *serve_one(SSL_CTX *server_ctx, SSL_CTX *client_ctx) {
  SSL *s = SSL_new(server_ctx), *c = SSL_new(client_ctx);
  if (!s || !c) die("SSL_new");
  BIO *s_in = BIO_new(BIO_s_mem()), *s_out = BIO_new(BIO_s_mem());
  BIO *c_in = BIO_new(BIO_s_mem()), *c_out = BIO_new(BIO_s_mem());
  SSL_set_bio(s, s_in, s_out);
  SSL_set_bio(c, c_in, c_out);
  SSL_set_accept_state(s);
  SSL_set_connect_state(c);
  for (int round = 0; round < 8 && !(SSL_is_init_finished(s) && SSL_is_init_finished(c)); round++) {
    SSL_do_handshake(c);
    pump(c_out, s_in);
    SSL_do_handshake(s);
    pump(s_out, c_in);
  }
  if (!SSL_is_init_finished(s) || !SSL_is_init_finished(c)) die("handshake");
  static const char request[] = "GET /file HTTP/1.1\r\nHost: localhost\r\n\r\n";
  char buf[4096];
  if (SSL_write(c, request, sizeof request - 1) <= 0) die("client SSL_write");
  pump(c_out, s_in);
  if (SSL_read(s, buf, sizeof buf) <= 0) die("server SSL_read");
  memset(buf, 'x', 1500);
  if (SSL_write(s, buf, 1500) <= 0) die("server SSL_write");
  pump(s_out, c_in);
  if (SSL_read(c, buf, sizeof buf) <= 0) die("client SSL_read");
  SSL_free(c);
  BIO *null = BIO_new(BIO_s_null());
  if (!null || !BIO_up_ref(null)) die("BIO_new");
  SSL_set_bio(s, null, null);
  return s;
}

static int by_size_desc(const void *a, const void *b) {
  const struct alloc *x = a, *y = b;
  return (y->len > x->len) - (y->len < x->len);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  if (n < 1) die("argument N");
  if (!CRYPTO_set_mem_functions(on_malloc, on_realloc, on_free)) die("CRYPTO_set_mem_functions");
  SSL_CTX *server_ctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX *client_ctx = SSL_CTX_new(TLS_client_method());
  if (!server_ctx || !client_ctx) die("SSL_CTX_new");
  if (SSL_CTX_use_certificate_file(server_ctx, "cert.pem", SSL_FILETYPE_PEM) != 1) die("cert.pem");
  if (SSL_CTX_use_PrivateKey_file(server_ctx, "key.pem", SSL_FILETYPE_PEM) != 1) die("key.pem");
  SSL_CTX_set_min_proto_version(server_ctx, TLS1_3_VERSION);
  SSL_CTX_set_mode(server_ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_mode(client_ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_session_cache_mode(client_ctx, SSL_SESS_CACHE_OFF);

  for (int i = 0; i < 50; i++) SSL_free(serve_one(server_ctx, client_ctx)); /* warm-up */
  SSL **kept = calloc(n, sizeof *kept);
  if (!kept) die("calloc");
  malloc_trim(0);
  size_t before = mallinfo2().uordblks;
  for (int i = 0; i < n; i++) {
    tracking = i == n - 1;
    kept[i] = serve_one(server_ctx, client_ctx);
  }
  tracking = 0;
  size_t after = mallinfo2().uordblks;

  printf("%s, %d idle server connections (TLS 1.3, %s)\n", OpenSSL_version(OPENSSL_VERSION), n,
         SSL_get_cipher_name(kept[n - 1]));
  printf("malloc in use per connection: %.0f B\n", (double)(after - before) / n);
  qsort(tracked, n_tracked, sizeof *tracked, by_size_desc);
  size_t total = 0;
  printf("what the last connection holds, by OpenSSL source line:\n");
  for (int i = 0; i < n_tracked; i++) {
    if (!tracked[i].ptr) continue;
    total += tracked[i].len;
    printf("%8zu  %s:%d\n", tracked[i].len, tracked[i].file, tracked[i].line);
  }
  printf("%8zu  in all (requested sizes, without malloc's own overhead)\n", total);
  for (int i = 0; i < n; i++) SSL_free(kept[i]);
  free(kept);
  SSL_CTX_free(server_ctx);
  SSL_CTX_free(client_ctx);
  return 0;
}
