//! The rule table's tests: every positive format is refused with its rule,
//! every look-alike passes. Fake secrets are assembled at run time from
//! pieces and a seeded generator, so this file holds no token-shaped
//! literal for push protection or scanners to flag.

#![cfg(test)]

use super::gate::entropy;
use super::*;
use proptest::prelude::*;
use std::cell::Cell;

fn j(parts: &[&str]) -> String {
    parts.concat()
}

thread_local! {
    static SEED: Cell<u64> = const { Cell::new(0x9e37_79b9_7f4a_7c15) };
}

/// `n` characters drawn from `alphabet` (xorshift, seeded per thread).
fn gen(alphabet: &str, n: usize) -> String {
    let a: Vec<char> = alphabet.chars().collect();
    SEED.with(|s| {
        let mut x = s.get();
        let out = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                a[(x % a.len() as u64) as usize]
            })
            .collect();
        s.set(x);
        out
    })
}

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";

fn an(n: usize) -> String {
    gen(&j(&[UPPER, LOWER, DIGITS]), n)
}
fn hex(n: usize) -> String {
    gen("0123456789abcdef", n)
}
fn up(n: usize) -> String {
    gen(&j(&[UPPER, DIGITS]), n)
}
fn low(n: usize) -> String {
    gen(&j(&[LOWER, DIGITS]), n)
}
fn alpha(n: usize) -> String {
    gen(&j(&[UPPER, LOWER]), n)
}
fn url(n: usize) -> String {
    gen(&j(&[UPPER, LOWER, DIGITS, "_-"]), n)
}
fn b64(n: usize) -> String {
    gen(&j(&[UPPER, LOWER, DIGITS, "+/"]), n)
}
fn uuid() -> String {
    j(&[
        &hex(8),
        "-",
        &hex(4),
        "-",
        &hex(4),
        "-",
        &hex(4),
        "-",
        &hex(12),
    ])
}

/// Standard base64, padded.
fn enc(s: &str) -> String {
    let t = j(&[UPPER, LOWER, DIGITS, "+/"]);
    let t = t.as_bytes();
    let mut out = String::new();
    for c in s.as_bytes().chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                out.push(t[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A PEM block of fake key material.
fn pem(kind: &str) -> String {
    let mut s = j(&["-----BEGIN ", kind, " KEY-----\n"]);
    for _ in 0..4 {
        s.push_str(&b64(64));
        s.push('\n');
    }
    s.push_str(&j(&["-----END ", kind, " KEY-----"]));
    s
}

/// (rule, text, line) for every format the gate must refuse.
fn positives() -> Vec<(&'static str, String, usize)> {
    let one = |rule: &'static str, text: String| (rule, text, 1);
    let mut v = vec![
        // cloud
        one(
            "aws-access-key-id",
            j(&[
                "aws_access_key_id = ",
                "AKIA",
                &gen("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
            ]),
        ),
        one(
            "aws-access-key-id",
            j(&[
                "temp: ",
                "ASIA",
                &gen("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
            ]),
        ),
        one(
            "aws-access-key-id",
            j(&[
                "ABIA",
                &gen("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
                " for billing",
            ]),
        ),
        one(
            "aws-secret-access-key",
            j(&["aws_secret_access_key = ", &b64(40)]),
        ),
        one(
            "aws-secret-access-key",
            j(&["AWS_SECRET_KEY: \"", &b64(40), "\""]),
        ),
        one("aws-bedrock-key", j(&["ABSK", &b64(132)])),
        one("aws-mws-key", j(&["amzn.mws.", &uuid()])),
        one("google-api-key", j(&["key=AIza", &url(35)])),
        one(
            "google-oauth-secret",
            j(&["client secret GOCSPX-", &url(28)]),
        ),
        one("google-oauth-token", j(&["ya29.", &url(60)])),
        one("google-refresh-token", j(&["refresh: 1//0", &url(60)])),
        one(
            "gcp-service-account",
            j(&[
                "{\"type\": \"service_account\", \"private_key_id\": \"",
                &hex(40),
                "\"}",
            ]),
        ),
        one(
            "azure-storage-key",
            j(&[
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=",
                &b64(86),
                "==;",
            ]),
        ),
        one(
            "azure-shared-access-key",
            j(&[
                "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=",
                &b64(43),
                "=",
            ]),
        ),
        one(
            "azure-sas-token",
            j(&[
                "https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig=",
                &b64(40),
                "%3D",
            ]),
        ),
        one(
            "azure-ad-client-secret",
            j(&["AZURE_CLIENT_SECRET='", &an(3), "8Q~", &url(34), "'"]),
        ),
        one(
            "azure-container-registry-key",
            j(&["acr admin: ", &an(42), "+ACR", &an(6)]),
        ),
        one("azure-devops-pat", j(&[&an(76), "AZDO", &an(4)])),
        one(
            "azure-devops-pat",
            j(&[
                "AZURE_DEVOPS_EXT_PAT=",
                &gen("abcdefghijklmnopqrstuvwxyz234567", 52),
            ]),
        ),
        one("alibaba-access-key-id", j(&["LTAI", &an(20)])),
        one("tencent-secret-id", j(&["SecretId: AKID", &an(32)])),
        one("yandex-key", j(&["AQVN", &url(36)])),
        one("yandex-key", j(&["yandex_key: YC", &url(38)])),
        one(
            "cloudflare-origin-ca-key",
            j(&["v1.0-", &hex(24), "-", &hex(146)]),
        ),
        one(
            "cloudflare-api-token",
            j(&["CLOUDFLARE_API_TOKEN=", &url(40)]),
        ),
        one("digitalocean-token", j(&["dop_v1_", &hex(64)])),
        one("digitalocean-token", j(&["dor_v1_", &hex(64)])),
        one("digitalocean-token", j(&["doo_v1_", &hex(64)])),
        one("heroku-api-key", j(&["HRKU-", &url(60)])),
        one("heroku-api-key", j(&["HEROKU_API_KEY=", &uuid()])),
        one("vercel-token", j(&["vcp_", &an(40)])),
        one("vercel-token", j(&["VERCEL_TOKEN=", &an(24)])),
        one("netlify-token", j(&["nfp_", &an(40)])),
        one("netlify-token", j(&["NETLIFY_AUTH_TOKEN: ", &url(43)])),
        one("render-api-key", j(&["rnd_", &an(32)])),
        one("flyio-token", j(&["FLY_API_TOKEN=fo1_", &url(43)])),
        one("flyio-token", j(&["FlyV1 fm2_", &b64(140)])),
        one("railway-token", j(&["RAILWAY_TOKEN=", &uuid()])),
        one("supabase-token", j(&["sbp_", &hex(40)])),
        one("supabase-token", j(&["sb_secret_", &url(32)])),
        one("planetscale-token", j(&["pscale_tkn_", &url(43)])),
        one("planetscale-token", j(&["pscale_pw_", &url(43)])),
        one("neon-api-key", j(&["napi_", &low(64)])),
        one("databricks-token", j(&["dapi", &hex(32)])),
        one("scalingo-token", j(&["tk-us-", &url(48)])),
        one(
            "openshift-token",
            j(&["oc login --token=sha256~", &url(43)]),
        ),
        // code hosts, registries, CI
        one("github-pat", j(&["ghp_", &an(36)])),
        one("github-oauth", j(&["gho_", &an(36)])),
        one("github-app-token", j(&["ghu_", &an(36)])),
        one("github-app-token", j(&["ghs_", &an(36)])),
        one("github-refresh-token", j(&["ghr_", &an(76)])),
        one(
            "github-fine-grained-pat",
            j(&["github_pat_", &an(22), "_", &an(59)]),
        ),
        one("gitlab-pat", j(&["glpat-", &url(20)])),
        one("gitlab-pat", j(&["glpat-", &url(27), ".01.", &low(9)])),
        one("gitlab-runner-token", j(&["glrt-", &url(20)])),
        one("gitlab-runner-token", j(&["glrt-t1_", &url(27)])),
        one(
            "gitlab-runner-registration-token",
            j(&["GR1348941", &url(20)]),
        ),
        one("gitlab-deploy-token", j(&["gldt-", &url(20)])),
        one(
            "gitlab-cicd-job-token",
            j(&["glcbt-", &an(2), "_", &url(20)]),
        ),
        one("gitlab-pipeline-trigger-token", j(&["glptt-", &hex(40)])),
        one("gitlab-scim-token", j(&["glsoat-", &url(20)])),
        one("gitlab-feed-token", j(&["glft-", &url(20)])),
        one("gitlab-incoming-mail-token", j(&["glimt-", &url(25)])),
        one("gitlab-agent-token", j(&["glagent-", &url(50)])),
        one("gitlab-oauth-secret", j(&["gloas-", &url(64)])),
        one("gitlab-feature-flag-token", j(&["glffct-", &url(20)])),
        one(
            "gitlab-session-cookie",
            j(&["Cookie: _gitlab_session=", &low(32)]),
        ),
        one("gitlab-token", j(&["glwt-", &an(24)])),
        one("bitbucket-app-password", j(&["ATBB", &an(32)])),
        one("bitbucket-access-token", j(&["ATCTT3", &url(180)])),
        one("atlassian-token", j(&["ATATT3", &url(186)])),
        one(
            "bitbucket-client-secret",
            j(&["bitbucket_client_secret: ", &url(64)]),
        ),
        one("gitea-token", j(&["GITEA_TOKEN=", &hex(40)])),
        one("sourcegraph-token", j(&["sgp_", &hex(16), "_", &hex(40)])),
        one(
            "docker-hub-token",
            j(&[
                "docker login -u ci --password-stdin <<< dckr_pat_",
                &url(27),
            ]),
        ),
        one("docker-hub-token", j(&["dckr_oat_", &url(32)])),
        one("quay-token", j(&["QUAY_ROBOT_TOKEN=", &up(64)])),
        one(
            "npm-token",
            j(&["//registry.npmjs.org/:_authToken=npm_", &an(36)]),
        ),
        one("pypi-token", j(&["pypi-", "AgEIcHlwaS5vcmc", &url(60)])),
        one("rubygems-token", j(&["rubygems_", &hex(48)])),
        one("nuget-key", j(&["oy2", &low(43)])),
        one("crates-io-token", j(&["cio", &an(32)])),
        one("clojars-token", j(&["CLOJARS_", &low(60)])),
        one("artifactory-key", j(&["AKCp", &an(69)])),
        one("artifactory-key", j(&["cmVmd", &an(59)])),
        one("circleci-token", j(&["CCIPAT_", &an(22), "_", &hex(40)])),
        one("buildkite-token", j(&["bkua_", &hex(40)])),
        one("sonarqube-token", j(&["squ_", &hex(40)])),
        one(
            "terraform-cloud-token",
            j(&[&an(14), ".atlasv1.", &url(67)]),
        ),
        one("pulumi-token", j(&["pul-", &hex(40)])),
        one("doppler-token", j(&["dp.pt.", &an(43)])),
        one("doppler-token", j(&["dp.st.prd.", &an(40)])),
        one("hashicorp-vault-token", j(&["hvs.", &url(90)])),
        one("hashicorp-vault-token", j(&["hvb.", &url(138)])),
        one("onepassword-token", j(&["ops_eyJ", &b64(260)])),
        one(
            "onepassword-secret-key",
            j(&[
                "A3-",
                &up(6),
                "-",
                &up(11),
                "-",
                &up(5),
                "-",
                &up(5),
                "-",
                &up(5),
            ]),
        ),
        one(
            "age-secret-key",
            j(&[
                "AGE-SECRET-KEY-1",
                &gen("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
            ]),
        ),
        one("postman-api-key", j(&["PMAK-", &hex(24), "-", &hex(34)])),
        one("figma-token", j(&["figd_", &url(40)])),
        one(
            "youtrack-token",
            j(&["perm:", &enc("root"), ".", &enc("44-0"), ".", &an(30)]),
        ),
        one("prefect-token", j(&["pnu_", &an(36)])),
        one("readme-token", j(&["rdme_", &low(70)])),
        one("infracost-token", j(&["ico-", &an(32)])),
        one(
            "harness-token",
            j(&["pat.", &url(22), ".", &an(24), ".", &an(20)]),
        ),
        one("octopus-deploy-key", j(&["API-", &up(26)])),
        one("frameio-token", j(&["fio-u-", &url(64)])),
        one("typeform-token", j(&["tfp_", &url(59)])),
        // AI
        one("openai-key", j(&["sk-", &an(20), "T3Blbk", "FJ", &an(20)])),
        one(
            "openai-key",
            j(&["sk-proj-", &url(74), "T3Blbk", "FJ", &url(74)]),
        ),
        one("openai-project-key", j(&["sk-proj-", &url(60)])),
        one("openai-project-key", j(&["sk-svcacct-", &url(60)])),
        one("anthropic-key", j(&["sk-ant-api03-", &url(93), "AA"])),
        one("anthropic-key", j(&["sk-ant-admin01-", &url(93), "AA"])),
        one("anthropic-key", j(&["sk-ant-oat01-", &url(93), "AA"])),
        one("openrouter-key", j(&["sk-or-v1-", &hex(64)])),
        one("huggingface-token", j(&["hf_", &alpha(34)])),
        one("huggingface-token", j(&["api_org_", &alpha(34)])),
        one("groq-key", j(&["gsk_", &an(52)])),
        one("perplexity-key", j(&["pplx-", &an(48)])),
        one("replicate-token", j(&["r8_", &an(37)])),
        one("xai-key", j(&["xai-", &an(80)])),
        one("langsmith-key", j(&["lsv2_pt_", &hex(32), "_", &hex(10)])),
        // chat, mail, webhooks
        one(
            "slack-token",
            j(&[
                "xoxb-",
                &gen(DIGITS, 12),
                "-",
                &gen(DIGITS, 13),
                "-",
                &an(24),
            ]),
        ),
        one(
            "slack-token",
            j(&[
                "xoxp-",
                &gen(DIGITS, 12),
                "-",
                &gen(DIGITS, 12),
                "-",
                &gen(DIGITS, 12),
                "-",
                &hex(32),
            ]),
        ),
        one("slack-token", j(&["xoxa-2-", &an(40)])),
        one("slack-config-token", j(&["xoxe.xoxp-1-", &up(163)])),
        one("slack-config-token", j(&["xoxe-1-", &up(146)])),
        one(
            "slack-app-token",
            j(&["xapp-1-A", &up(10), "-", &gen(DIGITS, 13), "-", &hex(64)]),
        ),
        one(
            "slack-webhook",
            j(&[
                "https://hooks.slack.com/services/T",
                &up(8),
                "/B",
                &up(10),
                "/",
                &an(24),
            ]),
        ),
        one(
            "slack-webhook",
            j(&[
                "https://hooks.slack.com/workflows/T",
                &up(8),
                "/A",
                &up(10),
                "/",
                &gen(DIGITS, 18),
                "/",
                &an(24),
            ]),
        ),
        one(
            "discord-webhook",
            j(&[
                "https://discord.com/api/webhooks/",
                &gen(DIGITS, 18),
                "/",
                &url(68),
            ]),
        ),
        one(
            "discord-bot-token",
            j(&["DISCORD_BOT=", "MT", &an(24), ".", &url(6), ".", &url(38)]),
        ),
        one(
            "discord-bot-token",
            j(&["bot token: ", "OD", &an(22), ".", &url(6), ".", &url(27)]),
        ),
        one("discord-token", j(&["discord_client_secret = ", &url(32)])),
        one(
            "telegram-bot-token",
            j(&["bot", &gen(DIGITS, 10), ":AA", &url(33)]),
        ),
        one(
            "telegram-bot-token",
            j(&["TELEGRAM=", &gen(DIGITS, 9), ":AA", &url(33)]),
        ),
        one(
            "teams-webhook",
            j(&[
                "https://acme.webhook.office.com/webhookb2/",
                &uuid(),
                "@",
                &uuid(),
                "/IncomingWebhook/",
                &hex(32),
                "/",
                &uuid(),
                "/V2",
                &url(40),
            ]),
        ),
        one(
            "google-chat-webhook",
            j(&[
                "https://chat.googleapis.com/v1/spaces/AAAA",
                &an(7),
                "/messages?key=",
                &url(39),
                "&token=",
                &url(43),
            ]),
        ),
        one(
            "zapier-webhook",
            j(&[
                "https://hooks.zapier.com/hooks/catch/",
                &gen(DIGITS, 7),
                "/",
                &low(6),
                "/",
            ]),
        ),
        one(
            "mattermost-webhook",
            j(&["https://chat.example.org/hooks/", &low(26)]),
        ),
        one("twilio-key", j(&["SK", &hex(32)])),
        one("twilio-auth-token", j(&["TWILIO_AUTH_TOKEN=", &hex(32)])),
        one("sendgrid-key", j(&["SG.", &url(22), ".", &url(43)])),
        one("sendinblue-key", j(&["xkeysib-", &hex(64), "-", &an(16)])),
        one("mailgun-key", j(&["key-", &hex(32)])),
        one("mailchimp-key", j(&[&hex(32), "-us14"])),
        one("postmark-token", j(&["POSTMARK_SERVER_TOKEN=", &uuid()])),
        one(
            "webhook-signing-secret",
            j(&["STRIPE_WEBHOOK_SECRET=whsec_", &an(32)]),
        ),
        one("webhook-signing-secret", j(&["svix: whsec_", &b64(32)])),
        // payments
        one("stripe-key", j(&["sk_", "live_", &an(99)])),
        one("stripe-key", j(&["rk_", "test_", &an(24)])),
        one("square-token", j(&["sq0atp-", &url(22)])),
        one("square-token", j(&["sq0csp-", &url(43)])),
        one("square-token", j(&["EAAA", &url(60)])),
        one("shopify-token", j(&["shpat_", &hex(32)])),
        one("shopify-token", j(&["shpss_", &hex(32)])),
        one(
            "braintree-token",
            j(&["access_token$production$", &low(16), "$", &hex(32)]),
        ),
        one("razorpay-key", j(&["rzp_live_", &an(14)])),
        one("flutterwave-key", j(&["FLWSECK_TEST-", &hex(32), "-X"])),
        one("duffel-token", j(&["duffel_live_", &url(43)])),
        one("shippo-token", j(&["shippo_live_", &hex(40)])),
        one("easypost-key", j(&["EZAK", &an(54)])),
        // SaaS
        one("sentry-token", j(&["sntryu_", &hex(64)])),
        one("new-relic-key", j(&["NRAK-", &up(27)])),
        one("new-relic-key", j(&["NRJS-", &hex(19)])),
        one("grafana-token", j(&["glsa_", &an(32), "_", &hex(8)])),
        one("grafana-token", j(&["glc_", &b64(60)])),
        one("dynatrace-token", j(&["dt0c01.", &up(24), ".", &an(64)])),
        one("datadog-key", j(&["DD_API_KEY=", &hex(32)])),
        one("linear-api-key", j(&["lin_api_", &an(40)])),
        one("notion-token", j(&["ntn_", &gen(DIGITS, 11), &an(35)])),
        one("notion-token", j(&["secret_", &an(43)])),
        one("airtable-token", j(&["pat", &an(14), ".", &hex(64)])),
        one("atlassian-token", j(&["JIRA_API_TOKEN=", &an(24)])),
        one("okta-token", j(&["OKTA_API_TOKEN=00", &url(40)])),
        one(
            "mapbox-secret-token",
            j(&["sk.eyJ", &url(60), ".", &url(22)]),
        ),
        one("dropbox-token", j(&["sl.", &url(135)])),
        one("facebook-token", j(&["EAAC", &an(120)])),
        one("twitter-bearer-token", j(&[&"A".repeat(22), &an(90)])),
        one("adobe-client-secret", j(&["p8e-", &an(32)])),
        one("clickhouse-key", j(&["4b1d", &an(38)])),
        one("maxmind-license-key", j(&[&an(6), "_", &an(29), "_mmk"])),
        one("settlemint-token", j(&["sm_pat_", &an(16)])),
        one("intra42-secret", j(&["s-s4t2ud-", &hex(64)])),
        // keys
        one("private-key", pem("RSA PRIVATE")),
        one("private-key", pem("OPENSSH PRIVATE")),
        one("private-key", pem("EC PRIVATE")),
        one("private-key", pem("ENCRYPTED PRIVATE")),
        one(
            "private-key",
            j(&["-----BEGIN PGP ", "PRIVATE KEY BLOCK-----\n\n", &b64(64)]),
        ),
        one(
            "private-key",
            j(&[
                "{\"private_key\": \"-----BEGIN ",
                "PRIVATE KEY-----\\n",
                &b64(64),
                "\\n\"}",
            ]),
        ),
        one("private-key", j(&["-----BEGIN DSA ", "PRIVATE KEY-----"])),
        one(
            "putty-private-key",
            j(&["PuTTY-User-Key-File-3: ", "ssh-ed25519\nEncryption: none"]),
        ),
        one(
            "jwt",
            j(&[
                "eyJ",
                enc("{\"alg\":\"HS256\",\"typ\":\"JWT\"}")[3..].trim_end_matches('='),
                ".eyJ",
                &url(40),
                ".",
                &url(43),
            ]),
        ),
        // generic
        one(
            "url-credentials",
            j(&["postgres://app:", &an(12), "@db.internal:5432/app"]),
        ),
        one(
            "url-credentials",
            j(&["DATABASE_URL=mysql://root:", "hunter2", "@localhost/app"]),
        ),
        one("url-credentials", j(&["postgres://u:", "p@ss", "@host/db"])),
        one(
            "url-credentials",
            j(&["redis://:", "s3cr3t", "@cache:6379/0"]),
        ),
        one(
            "url-credentials",
            j(&["amqp://guest:", "Guest#2024", "@rabbit/"]),
        ),
        one(
            "url-credentials",
            j(&["git clone https://oauth2:", &an(20), "@gitlab.com/g/p.git"]),
        ),
        one(
            "url-credentials",
            j(&["mongodb+srv://admin:", "Pa55w0rd", "@cluster0.mongodb.net/"]),
        ),
        one(
            "url-credentials",
            j(&["ftp://deploy:", "letmein99", "@ftp.corp.net"]),
        ),
        one(
            "docker-config-auth",
            j(&[
                "{\"auths\": {\"ghcr.io\": {\"auth\": \"",
                &enc(&j(&["ci:", &an(20)])),
                "\"}}}",
            ]),
        ),
        one(
            "basic-auth",
            j(&["Authorization: Basic ", &enc(&j(&["admin:", "hunter2"]))]),
        ),
        one(
            "basic-auth",
            j(&[
                "curl -H 'Authorization: Basic ",
                &enc(&j(&["api:", &an(16)])),
                "' https://x",
            ]),
        ),
        one("bearer-token", j(&["Authorization: Bearer ", &url(40)])),
        one(
            "bearer-token",
            j(&["-H \"Authorization: token ", &hex(40), "\""]),
        ),
        one("generic-secret", j(&["DB_PASSWORD=", &an(16)])),
        one("generic-secret", j(&["password: \"", "Tr0ub4dor&3", "\""])),
        one("generic-secret", j(&["api_key: \"", &hex(32), "\""])),
        one("generic-secret", j(&["client_secret = ", &an(18)])),
        one("generic-secret", j(&["export DB_PASS=", "Summer2024"])),
        one("generic-secret", j(&["export SESSION_SIGNER=", &b64(40)])),
        one("generic-secret", j(&["SIGNING_KEY=", &an(32)])),
        one(
            "generic-secret",
            j(&["\"webhookSecret\": \"", &an(24), "\""]),
        ),
        one("generic-secret", j(&["secret: ", "mysecret123"])),
        one("generic-secret", j(&["passwd=", "hunter2"])),
        one(
            "generic-secret",
            j(&["the staging db password is ", "hunter2hunter2"]),
        ),
        one("generic-secret", j(&["Password was now ", "Xk9#mQ2v", "."])),
        one("generic-secret", j(&["pwd: ", "Xk9#mQ2v"])),
        one("generic-secret", j(&["x-api-key: ", &an(32)])),
        one(
            "generic-secret",
            j(&["<add key=\"apikey\" value=\"", &an(24), "\"/>"]),
        ),
        one(
            "generic-secret",
            j(&["machine api.github.com login bot password ", &an(20)]),
        ),
        one(
            "generic-secret",
            j(&["docker login -u ci -p ", &an(20), " registry.corp"]),
        ),
        one(
            "generic-secret",
            j(&["mysql_client --password ", "Winter#2025"]),
        ),
        one("generic-secret", j(&["数据库密码：", "Zhang2024!"])),
        one("generic-secret", j(&["口令＝", "abc12345"])),
        one("generic-secret", j(&["API 密钥：", &an(24)])),
        one("generic-secret", j(&["访问令牌: ", &an(32)])),
        one("generic-secret", j(&["Token：", &an(32)])),
        one("generic-secret", j(&["密码是 ", "Qw3rtz!x"])),
        one("generic-secret", j(&["パスワード：", "Tokyo2024x"])),
        one("generic-secret", j(&["salt = ", &b64(24)])),
        one(
            "generic-secret",
            j(&["PRIVATE_KEY_PASSPHRASE=", "correct-horse-9"]),
        ),
        one("generic-secret", j(&["github_pat: ", &an(40)])),
        one("generic-secret", j(&["token = ", &alpha(24)])),
        one("generic-secret", j(&["auth: ", &uuid()])),
    ];
    // Hidden: base64, YAML escapes and block scalars. The line is the
    // encoded text's.
    let ghp = j(&["ghp_", &an(36)]);
    let escaped: String = ghp
        .chars()
        .map(|c| format!("\\x{:02x}", c as u32))
        .collect();
    let unicode: String = ghp
        .chars()
        .map(|c| format!("\\u{:04X}", c as u32))
        .collect();
    v.extend([
        one("github-pat", j(&["token_b64: ", &enc(&ghp)])),
        one("github-pat", enc(&j(&["export GITHUB_TOKEN=", &ghp]))),
        one(
            "private-key",
            j(&["key: ", &enc(&pem("RSA PRIVATE")).replace('\n', "")]),
        ),
        one(
            "private-key",
            enc(&pem("OPENSSH PRIVATE"))[..200].to_string(),
        ),
        one(
            "generic-secret",
            j(&["data:\n  password: ", &enc("Winter2025!")]).replacen("data:\n", "", 1),
        ),
        one("github-pat", enc(&enc(&ghp))),
        // A token glued to words by underscores, in running text.
        one("github-pat", j(&["backup at deploy_", &ghp, "_old today"])),
        one("github-pat", j(&["export TOKEN_", &ghp])),
        // Letters glued to the base64 on both sides, and hex-encoded.
        one("github-pat", j(&["blob:xQ", &enc(&ghp), "Zk"])),
        one("github-pat", j(&["id a", &enc(&j(&["token ", &ghp])), "b"])),
        one(
            "github-pat",
            j(&[
                "hex ",
                &ghp.bytes().map(|b| format!("{b:02x}")).collect::<String>(),
            ]),
        ),
        (
            "github-pat",
            j(&["---\nname: x\ndescription: \"", &escaped, "\"\n---\nbody"]),
            3,
        ),
        ("github-pat", j(&["---\napi: \"", &unicode, "\"\n---"]), 2),
        (
            "generic-secret",
            j(&["---\npassword: \"\\x48unter2\\x21x\"\n---"]),
            2,
        ),
        (
            "generic-secret",
            j(&["---\npassword: 'p''ssw0rd9'\n---"]),
            2,
        ),
        (
            "generic-secret",
            j(&["---\npassword: |\n  ", "Winter2025!", "\n---"]),
            3,
        ),
        (
            "generic-secret",
            j(&["---\ndb:\n  password: >-\n    ", "Xk9mQ2vL7p", "\n"]),
            4,
        ),
        (
            "generic-secret",
            j(&["secrets:\n  api_token:\n    ", &an(32), "\n"]),
            3,
        ),
        ("github-pat", j(&["notes: |\n  the token is\n  ", &ghp]), 3),
        // Prose that names a token and gives it.
        one("generic-secret", j(&["the token is ", &an(40)])),
        one("generic-secret", j(&["deploy it with secret ", &an(40)])),
        one("generic-secret", j(&["The API key was now ", &an(32), "."])),
        one(
            "generic-secret",
            j(&["our access token `", &an(36), "` works"]),
        ),
        one("generic-secret", j(&["signing key ", &hex(64)])),
        (
            "generic-secret",
            j(&["{\"password\": \"\\u0053\\u0075mmer2024\"}"]),
            1,
        ),
    ]);
    v
}

/// Texts that look a little like secrets and are not.
fn look_alikes() -> Vec<String> {
    let mut v: Vec<String> = [
        "Use a token bucket for rate limiting.",
        "The password policy requires 12 characters and a symbol.",
        "The password is required and must be rotated every 90 days.",
        "The password is stored in Vault; never paste it here.",
        "Passwords are hashed with argon2id before they are stored.",
        "the password is 12 characters long",
        "Rotate the API key every 90 days.",
        "Secrets live in Vault, never in the repo.",
        "secret sauce: keep functions small",
        "token = os.environ['API_TOKEN']",
        "password: ${DB_PASSWORD}",
        "password = ${{ secrets.DB_PASSWORD }}",
        "token: <your-token-here>",
        "api_key = os.environ['API_KEY']",
        "api_key = os.getenv(\"API_KEY\")",
        "const token = process.env.GITHUB_TOKEN;",
        "secret = changeme",
        "password: xxxxxxxx",
        "password: ********",
        "password: REDACTED",
        "password = getpass.getpass()",
        "password = settings.DB_PASSWORD",
        "token: $GITHUB_TOKEN",
        "Authorization: Bearer $TOKEN",
        "Authorization: Bearer <token>",
        "Authorization: Bearer YOUR_ACCESS_TOKEN",
        "Authorization: Basic <base64 of user:password>",
        "Use HTTP basic authentication for the admin API.",
        "Bearer tokens are sent in the Authorization header.",
        "-----BEGIN PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----",
        "不要把 -----BEGIN RSA PRIVATE KEY----- 开头的文件提交到仓库",
        "Files that start with `-----BEGIN OPENSSH PRIVATE KEY-----` must never be committed.",
        "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        "AWS documents AKIAIOSFODNN7EXAMPLE as its example access key id.",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS access key ids start with AKIA; never paste one here.",
        "GitHub tokens have prefixes like ghp_ and github_pat_.",
        "Stripe test keys start with sk_test_, live keys with sk_live_.",
        "Use sk-... placeholders in docs, e.g. sk-XXXXXXXX.",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx is the shape of a PAT",
        "commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed it",
        "git checkout 3f9a2c1 && git log -1",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "The file's sha256 is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.",
        "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
        "JWTs start with eyJ because of base64.",
        "The token expires after 3600 seconds.",
        "Set password_min_length: 12 in the config.",
        "token_count = 4096 is the context size we use",
        "max_tokens: 1024",
        "Run `kubectl get secret app -o yaml` to inspect it.",
        "postgres://localhost:5432/app has no credentials in it",
        "postgres://app@db.internal:5432/app uses peer auth",
        "postgres://user:${DB_PASSWORD}@db/app",
        "postgres://user:password@localhost/app is the docs' example",
        "https://user:<password>@example.com",
        "clone git@github.com:org/repo.git then cd repo",
        "ssh://git@github.com:22/org/repo.git",
        "Mail ada@example.com or bob.smith+memoir@corp.io.",
        "https://example.com/path?query=1&page=2#section",
        "The auth token is read from the keychain at startup.",
        "secret_santa_2026 is the team event channel",
        "useAuthenticationTokenFromContext() returns the session token",
        "密码策略要求至少十二个字符",
        "密码：请向管理员索取",
        "密码：********",
        "令牌会在一小时后过期。",
        "密钥存放在保险库里，不要写进代码。",
        "パスワードは12文字以上にしてください。",
        "Version 1.2.3, then v2.0.0-rc.1 and 10.4.12+build.5",
        "npm install @types/node@20.11.5 lodash-es@4.17.21",
        "color: #ff8800; background: #1e1e2e; border-color: rgba(0,0,0,.1)",
        "primary_key: id",
        "sort_key: created_at",
        "cache_key = user:123:profile",
        "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx7Ykxh1vZ0b3d5Y1Zk8l2mN6Q0bJ3x5H7f2s9K1a4B ada@laptop",
        "password hashing: bcrypt with cost 12",
        "password: bcrypt",
        "key: value",
        "keyboard_layout: dvorak",
        "token_type: Bearer",
        "grant_type=client_credentials&scope=read",
        "auth: required",
        "authorName: Ada Lovelace",
        "author: Jane2024",
        "passenger_count = 3",
        "bypass_cache: true",
        "The secret to fast builds is caching.",
        "the token is expired; refresh it with the CLI",
        "the secret is in 1Password under Deploys/Production",
        "the access token is valid for 3600 seconds",
        "the api key is stored in the VAULT_PATH secret mount",
        "a token is issued per device (see DeviceRegistrationService)",
        "the signing key rotates every 90 days (kms key alias/app-signing)",
        "the secret key derivation uses HKDF-SHA256 with a 32 byte salt",
        "Tokenizers split text; the tokenizer version is 0.15.2.",
        "export PATH=/usr/local/bin:$PATH",
        "export NODE_ENV=production",
        "export GOFLAGS=-mod=mod",
        "export COMMIT=3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f",
        "Internationalization and localization are separate concerns.",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "SGVsbG8sIHdvcmxkISBUaGlzIGlzIGp1c3QgYmFzZTY0IHRleHQu",
        "The UUID v4 format is xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx.",
        "Discord bot tokens look like three dot-separated base64 parts.",
        "Telegram bot tokens are an id, a colon and 35 characters.",
        "Our Slack webhook lives in the secrets manager.",
        "Call /api/v1/tokens/refresh to rotate; see docs/auth.md.",
        "The x-api-key header carries the key.",
        "password_reset_url: https://app.example.com/reset",
        "token_url: https://oauth2.googleapis.com/token",
        "secretsmanager:GetSecretValue is the IAM action",
        "client_id: memoir-cli",
        "Use `--password-stdin` instead of -p.",
        "docker login -u ci --password-stdin < token.txt",
        "mysql -u root -p (it prompts for the password)",
        "the key insight: caching beats recomputation",
        "Note: a token bucket refills at 10/s.",
        "The hotkey is Ctrl+Shift+P.",
        "partition_key: tenant_id",
        "idempotency_key header, a UUID per request",
        "The build took 3m12s; 1,234 tests passed.",
        "ISBN 978-0-13-468599-1",
        "Call +1-555-0100 for support.",
        "2026-11-29T10:41:07Z is the release time",
        "x86_64-unknown-linux-gnu and aarch64-apple-darwin targets",
        "See RFC 7519 (JWT) and RFC 6750 (bearer tokens).",
        "signing_key: ed25519",
        "encryption: aes-256-gcm",
        "tls_cert_path: /etc/ssl/certs/app.pem",
        "password_file: /run/secrets/db_password",
        "passwd: /etc/passwd",
        "The word 'password' appears in 12 log lines.",
        "token: gpt-4o-mini",
        "api_version_key: 2024-06-01",
        "key_id: 7f3c",
        "secret_name: prod/db/password",
        "auth_method: oauth2",
        "machine learning models need data",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Base64 of ordinary text, and ordinary text with a long base64-free
    // identifier.
    v.push(enc(
        "Remember to run the migrations before deploying the service.",
    ));
    v.push(j(&[
        "blob: ",
        &enc("just some configuration notes, nothing secret here at all"),
    ]));
    v
}

#[test]
fn every_pattern_compiles_in_ascii_mode() {
    let e = engine().expect("engine");
    for (i, r) in RULES.iter().enumerate() {
        assert!(e.regex(i).is_some(), "{}", r.id);
    }
}

#[test]
fn every_positive_format_is_found_with_its_rule_and_line() {
    let cases = positives();
    assert!(cases.len() >= 150, "{} positives", cases.len());
    let mut missed = Vec::new();
    for (rule, text, line) in &cases {
        let found = find_secrets(text);
        let on_line = found.iter().find(|f| f.line == *line);
        if on_line.map(|f| f.rule) != Some(*rule) {
            missed.push(format!("{rule} (line {line}): {found:?} in {text:?}"));
        }
    }
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[test]
fn every_rule_has_a_positive_case() {
    let cases = positives();
    for r in RULES {
        assert!(
            cases.iter().any(|(id, _, _)| id == &r.id),
            "{} has no case",
            r.id
        );
    }
}

#[test]
fn no_look_alike_is_refused() {
    let cases = look_alikes();
    assert!(cases.len() >= 100, "{} look-alikes", cases.len());
    let refused: Vec<String> = cases
        .iter()
        .filter_map(|t| {
            let found = find_secrets(t);
            (!found.is_empty()).then(|| format!("{found:?}: {t:?}"))
        })
        .collect();
    assert!(
        refused.is_empty(),
        "{} refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}

#[test]
fn findings_name_lines_and_prefer_specific_rules() {
    let text = j(&["first line\nsecond: token = ghp_", &an(36), "\nlast"]);
    let found = find_secrets(&text);
    assert_eq!(
        found,
        vec![Finding {
            rule: "github-pat",
            line: 2
        }]
    );
    let text = j(&["a\n\nb: ", &enc(&j(&["ghp_", &an(36)])), "\nc"]);
    assert_eq!(find_secrets(&text)[0].line, 3);
}

#[test]
fn redact_replaces_every_secret_and_keeps_the_rest() {
    let ghp = j(&["ghp_", &an(36)]);
    let pass = an(16);
    let text = j(&["use ", &ghp, " and DB_PASSWORD=", &pass, " — 完了"]);
    let out = redact(&text);
    assert_eq!(
        out,
        "use [redacted:github-pat] and DB_PASSWORD=[redacted:generic-secret] — 完了"
    );
    let b = enc(&ghp);
    assert_eq!(redact(&j(&["x ", &b, " y"])), "x [redacted:github-pat] y");
    let arg = j(&[
        "error: unexpected argument '",
        &pem("RSA PRIVATE"),
        "' found",
    ]);
    let out = redact(&arg);
    assert!(
        out.contains("[redacted:private-key]") && !out.contains("-----BEGIN"),
        "{out}"
    );
    for t in look_alikes() {
        assert_eq!(redact(&t), t);
    }
    for (_, t, _) in positives() {
        let out = redact(&t);
        assert!(out.contains("[redacted:"), "{t:?} -> {out:?}");
        assert!(find_secrets(&out).is_empty(), "{t:?} -> {out:?}");
    }
}

/// A redaction's stub is never a secret itself, whatever keyword stands
/// before it, so a redacted text checks out and a second redaction
/// changes nothing; and the whole of a password is redacted, not the part
/// up to a character the rule's value class stops at.
#[test]
fn a_redaction_is_final_and_whole() {
    for text in [
        "use [redacted:github-pat:1dab31990100] for CI",
        "secret [redacted:generic-secret:fe4d28f856ca]",
        "token: [redacted:github-pat] and pat [redacted:generic-secret]",
    ] {
        assert!(find_secrets(text).is_empty(), "{text}");
        assert_eq!(redact(text), text);
    }
    let password = j(&["Tr0ub4dor", "&3x"]);
    let out = redact(&j(&["password: ", &password, " for the db"]));
    assert_eq!(out, "password: [redacted:generic-secret] for the db");
    let ghp = j(&["ghp_", &an(36)]);
    let once = redact(&j(&["pat ", &ghp, " and secret ", &an(20)]));
    assert!(find_secrets(&once).is_empty(), "{once}");
    assert_eq!(redact(&once), once);
}

#[test]
fn redact_and_find_are_safe_on_odd_input() {
    for t in [
        "",
        "\n",
        "=",
        "\"",
        "'",
        "\\",
        "\\x",
        "\"\\u12",
        "a: |",
        "k:\n",
        "-----BEGIN",
        "://:@",
        "密码：",
        "\u{feff}token=",
        "\r\n\r\n",
        "é\"\\xé\"",
        "''''''",
        "\"\\U0011FFFF\"",
    ] {
        let _ = find_secrets(t);
        let _ = redact(t);
    }
}

proptest! {
    #[test]
    fn random_high_entropy_after_password_is_caught(
        v in "[A-Za-z0-9+/]{20,64}",
        name in "(password|PASSWORD|db_password|passwd|api_key|secret|auth_token)",
        sep in "(=|: | = |=\")",
    ) {
        prop_assume!(entropy(&v) >= 3.5 && v.bytes().any(|b| b.is_ascii_digit()));
        prop_assume!(!gate::is_placeholder(&v));
        let text = format!("{name}{sep}{v}");
        prop_assert!(!find_secrets(&text).is_empty(), "{}", text);
    }

    #[test]
    fn random_hex_after_a_secret_name_is_caught(v in "[0-9a-f]{32,64}") {
        prop_assume!(v.bytes().filter(u8::is_ascii_digit).count() >= 2);
        prop_assume!(v.bytes().filter(u8::is_ascii_alphabetic).count() >= 2);
        prop_assume!(!gate::is_placeholder(&v));
        let text = format!("SECRET_KEY={v}");
        prop_assert!(!find_secrets(&text).is_empty(), "{}", text);
    }

    #[test]
    fn random_prose_is_not(words in proptest::collection::vec(
        "(the|a|token|password|key|secret|policy|bucket|rotate|every|days|is|of|for|auth|user|api|and|with|passes|keys|store|vault|never|commit|review|12|90|3600|config|value|name)",
        1..40,
    ), seps in proptest::collection::vec("( |, |: |\\. | = )", 40)) {
        let mut text = String::new();
        for (i, w) in words.iter().enumerate() {
            text.push_str(w);
            text.push_str(&seps[i]);
        }
        prop_assert!(find_secrets(&text).is_empty(), "{}", text);
    }
}

#[test]
fn a_token_glued_into_a_name_is_found() {
    let ghp = j(&["ghp_", &an(36)]);
    for name in [
        j(&["deploy_", &ghp]),
        j(&["project_", &ghp, ".md"]),
        j(&["always use ", &ghp]),
        j(&["x-", &ghp, "-y"]),
    ] {
        assert_eq!(
            super::find_in_name(&name).map(|f| f.rule),
            Some("github-pat"),
            "{name}"
        );
    }
    for name in [
        "deploy_checklist",
        "user_role",
        "release-freeze.md",
        "ghp_short",
    ] {
        assert_eq!(super::find_in_name(name), None, "{name}");
    }
}
