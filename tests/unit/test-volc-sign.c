/* tests/unit/test-volc-sign.c - Volcengine's request signature
 * (plugins/volcengine/volc-sign.c) against published figures and against
 * signers nobody here wrote:
 *   - the canonical request of the signature example of Volcengine's and
 *     BytePlus's documentation ("Signature example" / "Example", the IAM
 *     ListUsers GET of 2020-12-30: AK AKLTMjI2ODVl..., its SHA-256 given
 *     there as 4809ff4a...ae020),
 *   - HMAC-SHA256 of RFC 4231 test case 2 (the primitive under the keys),
 *   - the Authorization that @volcengine/openapi 1.36.2's Signer (npm)
 *     writes for a veFaaS CreateSandbox POST (it signs host, x-content-sha256
 *     and x-date), and the one of agent-infra/sandbox's sign.py scheme
 *     (content-type too), computed with Python's hmac and hashlib. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "tap.h"
#include "volc-sign.h"

#define EX_AK "AKLTMjI2ODVlYzI3ZGY1NGU4ZjhjYWRjMTlmNTM5OTZkYzE"
#define EX_SK "TnpCak5XWXpZV1U0WkRaaE5ERmxaR0ZpTmpjeVkyUXlZek0wTWpJMU1qWQ=="
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

int main(void)
{
    if (sodium_init() < 0)
        return 99;

    /* The documentation's example. */
    vc_header doc_h[] = {
        {"X-Date", "20201230T081805Z"},
        {"Host", "iam.byteplusapi.com"},
        {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
        {"X-Content-Sha256", EMPTY_SHA},
    };
    vc_sign_in doc = {.method = "GET", .path = "/",
                      .query = "Action=ListUsers&Limit=10&Offset=0&Version=2018-01-01",
                      .headers = doc_h, .n_headers = 4, .access_key = EX_AK,
                      .secret_key = EX_SK, .secret_len = strlen(EX_SK),
                      .region = "ap-singapore-1", .service = "iam",
                      .x_date = "20201230T081805Z"};
    char *c = vc_canonical(&doc);
    const char *want_c =
        "GET\n/\nAction=ListUsers&Limit=10&Offset=0&Version=2018-01-01\n"
        "content-type:application/x-www-form-urlencoded; charset=utf-8\n"
        "host:iam.byteplusapi.com\n"
        "x-content-sha256:" EMPTY_SHA "\nx-date:20201230T081805Z\n\n"
        "content-type;host;x-content-sha256;x-date\n" EMPTY_SHA;
    ok(c && !strcmp(c, want_c), "the documentation's canonical request, headers sorted and "
       "lowercased");
    char h[65];
    vc_sha256_hex(c ? c : "", c ? strlen(c) : 0, h);
    ok(!strcmp(h, "4809ff4a3260bb6714f750191275cfcf0c16466951fcfd99187e69644b6ae020"),
       "its SHA-256 is the published 4809ff4a...ae020 (%s)", h);
    free(c);

    /* RFC 4231, test case 2. */
    unsigned char mac[32];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, (const unsigned char *)"Jefe", 4);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)"what do ya want for nothing?", 28);
    crypto_auth_hmacsha256_final(&st, mac);
    char mh[65];
    sodium_bin2hex(mh, sizeof mh, mac, sizeof mac);
    ok(!strcmp(mh, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
       "HMAC-SHA256 of RFC 4231 test case 2");

    /* veFaaS CreateSandbox, as @volcengine/openapi's Signer signs it. */
    const char *body = "{\"FunctionId\":\"fn-1\",\"Timeout\":60}";
    char bh[65];
    vc_sha256_hex(body, strlen(body), bh);
    ok(!strcmp(bh, "112719594e5851ffe0f32367a151782d2e8c7c9471a296a6d3c091962631f15f"),
       "X-Content-Sha256 of the body as the SDK wrote it");
    vc_header sdk_h[] = {
        {"Host", "open.volcengineapi.com"},
        {"X-Date", "20200401T081805Z"},
        {"X-Content-Sha256", bh},
    };
    vc_sign_in sdk = {.method = "POST", .path = "/",
                      .query = "Action=CreateSandbox&Version=2024-06-06", .headers = sdk_h,
                      .n_headers = 3, .body = body, .body_len = strlen(body),
                      .access_key = EX_AK, .secret_key = EX_SK, .secret_len = strlen(EX_SK),
                      .region = "cn-beijing", .service = "vefaas", .x_date = "20200401T081805Z"};
    char sig[65];
    char *a = vc_authorization(&sdk, sig);
    ok(a && !strcmp(a, "HMAC-SHA256 Credential=" EX_AK "/20200401/cn-beijing/vefaas/request, "
                       "SignedHeaders=host;x-content-sha256;x-date, Signature="
                       "40c45e9593225b2ffa6d31ab3f4c2af9c575ca0217b2ceeb57c1dabb06e5b338"),
       "the Authorization @volcengine/openapi 1.36.2 writes for it");
    free(a);

    vc_header py_h[] = {
        {"Content-Type", "application/json"},
        {"Host", "open.volcengineapi.com"},
        {"X-Content-Sha256", bh},
        {"X-Date", "20200401T081805Z"},
    };
    sdk.headers = py_h;
    sdk.n_headers = 4;
    a = vc_authorization(&sdk, sig);
    ok(a && !strcmp(sig, "9d06be4955b0593ee1d6afb929a84399e52e949486b43462e3f7e8cff331157d") &&
       strstr(a, "SignedHeaders=content-type;host;x-content-sha256;x-date,"),
       "with content-type signed too (agent-infra/sandbox's sign.py scheme)");
    free(a);

    /* A changed byte changes the signature; blanks around values do not. */
    sdk.body = "{\"FunctionId\":\"fn-2\",\"Timeout\":60}";
    char sig2[65];
    a = vc_authorization(&sdk, sig2);
    ok(a && strcmp(sig, sig2) != 0, "the body's bytes are signed (its hash header aside)");
    free(a);
    char xd[17];
    vc_x_date(1585729085, xd);
    ok(!strcmp(xd, "20200401T081805Z"), "X-Date of a Unix time, UTC (%s)", xd);
    return tap_done();
}
