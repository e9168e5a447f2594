//! The token formats: each vendor's own shape of a key or token (cloud
//! providers, code hosts, AI, chat, payments, SaaS), then private keys and
//! signed tokens, most specific first. Apart from the generic rules
//! because they are a different kind of rule: a format is recognised by
//! its own prefix or shape wherever it stands, so it only needs
//! [`Gate::Token`]'s check of a value's entropy (or a gate of its own),
//! and it grows by vendor, one entry each, from gitleaks' and trufflehog's
//! lists (see the parent module). [`super::RULES`] puts these first: on a
//! line with two findings the format is reported, not the generic name.

use super::{d, g, Def, Gate, FORWARD};

/// The token formats, in the order they are tried.
pub(super) const FORMATS: &[Def] = &[
    // --- cloud providers ---
    d(
        "aws-access-key-id",
        &["A3T", "AKIA", "ASIA", "ABIA", "ACCA"],
        r"(?:\b|_)((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(?:\b|_)",
    ),
    d(
        "aws-secret-access-key",
        &["aws"],
        concat!(
            r"(?i)aws[a-z0-9_.\-]{0,20}(?:secret|sk)[a-z0-9_.\-]{0,20}",
            sep!(),
            r"([A-Za-z0-9/+]{40})"
        ),
    ),
    d(
        "aws-bedrock-key",
        &["ABSK", "bedrock-api-key-"],
        r"(?:\b|_)(ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]{20,})",
    ).long(),
    d(
        "aws-mws-key",
        &["amzn.mws."],
        r"(amzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})",
    ),
    d("google-api-key", &["AIza"], r"(?:\b|_)(AIza[0-9A-Za-z_\-]{35})"),
    d(
        "google-oauth-secret",
        &["GOCSPX-"],
        r"(?:\b|_)(GOCSPX-[A-Za-z0-9_\-]{28})",
    ),
    d(
        "google-oauth-token",
        &["ya29."],
        r"(?:\b|_)(ya29\.[0-9A-Za-z_\-]{30,})",
    ),
    d(
        "google-refresh-token",
        &["1//0"],
        r"(?:\b|_)(1//0[0-9A-Za-z_\-]{40,})",
    ),
    d(
        "gcp-service-account",
        &["private_key_id"],
        r#"("private_key_id"\s*:\s*"[a-f0-9]{40}")"#,
    ),
    d(
        "azure-storage-key",
        &["accountkey="],
        r"(?i)(AccountKey=[A-Za-z0-9+/=]{86,88})",
    ),
    d(
        "azure-shared-access-key",
        &["sharedaccesskey="],
        r"(?i)SharedAccessKey=([A-Za-z0-9+/=]{40,})",
    ),
    g(
        "azure-sas-token",
        &["sig="],
        r"(?i)[?&]sig=([A-Za-z0-9%+/_\-]{30,}(?:%3D|=){0,2})",
        Gate::Entropy(3.5),
    ),
    d(
        "azure-ad-client-secret",
        &["q~"],
        r"(?:\b|_)([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.\-]{31,34})",
    ),
    d(
        "azure-container-registry-key",
        &["+ACR"],
        r"(?:\b|_)([A-Za-z0-9+/]{42}\+ACR[A-Za-z0-9]{6})(?:\b|_)",
    ),
    d(
        "azure-devops-pat",
        &["AZDO"],
        r"(?:\b|_)([A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})(?:\b|_)",
    ),
    d(
        "azure-devops-pat",
        &["azure", "devops", "vsts", "ado_"],
        named!(r"(?:azure|devops|vsts|ado_)", r"[a-z2-7]{52}"),
    ),
    d(
        "alibaba-access-key-id",
        &["LTAI"],
        r"(?:\b|_)(LTAI[A-Za-z0-9]{20})(?:\b|_)",
    ),
    d("tencent-secret-id", &["AKID"], r"(?:\b|_)(AKID[A-Za-z0-9]{32})(?:\b|_)"),
    d(
        "yandex-key",
        &["AQVN", "t1."],
        r"(?:\b|_)(AQVN[A-Za-z0-9_\-]{35,38}|t1\.[A-Za-z0-9_\-]+=*\.[A-Za-z0-9_\-]{86}=*)",
    ),
    d(
        "yandex-key",
        &["yandex"],
        named!("yandex", r"YC[a-zA-Z0-9_\-]{38}"),
    ),
    d(
        "cloudflare-origin-ca-key",
        &["v1.0-"],
        r"(?:\b|_)(v1\.0-[a-f0-9]{24}-[a-f0-9]{146})",
    ),
    d(
        "cloudflare-api-token",
        &["cloudflare", "cf_api"],
        named!(r"(?:cloudflare|cf_api)", r"[A-Za-z0-9_\-]{37,40}"),
    ),
    d(
        "digitalocean-token",
        &["doo_v1_", "dop_v1_", "dor_v1_"],
        r"(?:\b|_)(do[opr]_v1_[a-f0-9]{64})(?:\b|_)",
    ),
    d("heroku-api-key", &["HRKU-"], r"(?:\b|_)(HRKU-[0-9A-Za-z_\-]{60})"),
    d(
        "heroku-api-key",
        &["heroku"],
        named!(
            "heroku",
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        ),
    ),
    d(
        "vercel-token",
        &["vcp_", "vck_", "vci_", "vca_", "vcr_"],
        r"(?:\b|_)(vc[pkiar]_[A-Za-z0-9]{24,})(?:\b|_)",
    ),
    d(
        "vercel-token",
        &["vercel"],
        named!("vercel", r"[A-Za-z0-9]{24}"),
    ),
    d(
        "netlify-token",
        &["nfp_", "nfc_", "nfo_", "nfu_", "nfb_"],
        r"(?:\b|_)(nf[pcoub]_[A-Za-z0-9_\-]{36,48})",
    ),
    d(
        "netlify-token",
        &["netlify"],
        named!("netlify", r"[A-Za-z0-9_\-]{40,46}"),
    ),
    d("render-api-key", &["rnd_"], r"(?:\b|_)(rnd_[A-Za-z0-9]{26,40})(?:\b|_)"),
    d(
        "flyio-token",
        &["fo1_", "fm1", "fm2_"],
        r"(?:\b|_)(fo1_[\w\-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
    ).long(),
    d(
        "railway-token",
        &["railway"],
        named!(
            "railway",
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        ),
    ),
    d(
        "supabase-token",
        &["sbp_", "sb_secret_"],
        r"(?:\b|_)(sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{28,})",
    ),
    d(
        "planetscale-token",
        &["pscale_"],
        r"(?:\b|_)(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=\-_.]{32,64})",
    ),
    d("neon-api-key", &["napi_"], r"(?:\b|_)(napi_[a-z0-9]{64})(?:\b|_)"),
    d(
        "databricks-token",
        &["dapi"],
        r"(?:\b|_)(dapi[a-f0-9]{32}(?:-\d)?)(?:\b|_)",
    ),
    d("scalingo-token", &["tk-us-"], r"(?:\b|_)(tk-us-[\w\-]{48})"),
    d("openshift-token", &["sha256~"], r"(?:\b|_)(sha256~[\w\-]{43})"),
    // --- code hosts, registries and CI ---
    d("github-pat", &["ghp_"], r"(?:\b|_)(ghp_[0-9A-Za-z]{36,251})(?:\b|_)").long(),
    d("github-oauth", &["gho_"], r"(?:\b|_)(gho_[0-9A-Za-z]{36,251})(?:\b|_)").long(),
    d(
        "github-app-token",
        &["ghu_", "ghs_"],
        r"(?:\b|_)((?:ghu|ghs)_[0-9A-Za-z]{36,251})(?:\b|_)",
    ).long(),
    d(
        "github-refresh-token",
        &["ghr_"],
        r"(?:\b|_)(ghr_[0-9A-Za-z]{36,251})(?:\b|_)",
    ).long(),
    d(
        "github-fine-grained-pat",
        &["github_pat_"],
        r"(?:\b|_)(github_pat_[0-9A-Za-z_]{60,251})(?:\b|_)",
    ).long(),
    d(
        "gitlab-pat",
        &["glpat-"],
        r"(?:\b|_)(glpat-[0-9A-Za-z_\-]{20,300}(?:\.[0-9a-z]{2}[0-9a-z]{7})?)",
    ),
    d(
        "gitlab-runner-token",
        &["glrt-", "glrtr-"],
        r"(?:\b|_)(glrtr?-(?:t\d_)?[0-9A-Za-z_\-]{20,300}(?:\.[0-9a-z]{9})?)",
    ),
    d(
        "gitlab-runner-registration-token",
        &["GR1348941"],
        r"(?:\b|_)(GR1348941[0-9A-Za-z_\-]{20})",
    ),
    d(
        "gitlab-deploy-token",
        &["gldt-"],
        r"(?:\b|_)(gldt-[0-9A-Za-z_\-]{20,})",
    ),
    d(
        "gitlab-cicd-job-token",
        &["glcbt-"],
        r"(?:\b|_)(glcbt-[0-9A-Za-z]{1,5}_[0-9A-Za-z_\-]{20,})",
    ),
    d(
        "gitlab-pipeline-trigger-token",
        &["glptt-"],
        r"(?:\b|_)(glptt-[0-9a-f]{40})",
    ),
    d(
        "gitlab-scim-token",
        &["glsoat-"],
        r"(?:\b|_)(glsoat-[0-9A-Za-z_\-]{20,})",
    ),
    d(
        "gitlab-feed-token",
        &["glft-"],
        r"(?:\b|_)(glft-[0-9A-Za-z_\-]{20,})",
    ),
    d(
        "gitlab-incoming-mail-token",
        &["glimt-"],
        r"(?:\b|_)(glimt-[0-9A-Za-z_\-]{25,})",
    ),
    d(
        "gitlab-agent-token",
        &["glagent-"],
        r"(?:\b|_)(glagent-[0-9A-Za-z_\-]{50,})",
    ),
    d(
        "gitlab-oauth-secret",
        &["gloas-"],
        r"(?:\b|_)(gloas-[0-9A-Za-z_\-]{64})",
    ),
    d(
        "gitlab-feature-flag-token",
        &["glffct-"],
        r"(?:\b|_)(glffct-[0-9A-Za-z_\-]{20,})",
    ),
    d(
        "gitlab-session-cookie",
        &["_gitlab_session="],
        r"_gitlab_session=([0-9a-z]{32})",
    ),
    // GitLab adds prefixes over time (glwt-, gltok-…): any gl*- token that
    // looks random.
    g(
        "gitlab-token",
        &["gl"],
        r"(?:\b|_)(gl[a-z]{2,7}-[0-9A-Za-z_\-]{20,300})",
        Gate::Tokenish,
    ),
    d(
        "bitbucket-app-password",
        &["ATBB"],
        r"(?:\b|_)(ATBB[A-Za-z0-9_=.\-]{28,})",
    ),
    d(
        "bitbucket-access-token",
        &["ATCTT3"],
        r"(?:\b|_)(ATCTT3[A-Za-z0-9_=\-]{60,})",
    ).long(),
    d(
        "atlassian-token",
        &["ATATT3"],
        r"(?:\b|_)(ATATT3[A-Za-z0-9_\-=]{150,})",
    ),
    d(
        "bitbucket-client-secret",
        &["bitbucket"],
        named!("bitbucket", r"[A-Za-z0-9=_\-]{32,64}"),
    ),
    d(
        "gitea-token",
        &["gitea", "forgejo", "gogs", "codeberg"],
        named!(r"(?:gitea|forgejo|gogs|codeberg)", r"[0-9a-f]{40}"),
    ),
    d(
        "sourcegraph-token",
        &["sgp_"],
        r"(?:\b|_)(sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40})(?:\b|_)",
    ),
    d(
        "docker-hub-token",
        &["dckr_"],
        r"(?:\b|_)(dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,})",
    ),
    d(
        "quay-token",
        &["quay"],
        named!("quay", r"[A-Z0-9]{64}|[A-Za-z0-9]{40}"),
    ),
    d("npm-token", &["npm_"], r"(?:\b|_)(npm_[A-Za-z0-9]{36})(?:\b|_)"),
    d(
        "pypi-token",
        &["pypi-ageichlwas5vcmc"],
        r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})",
    ).long(),
    d(
        "rubygems-token",
        &["rubygems_"],
        r"(?:\b|_)(rubygems_[a-f0-9]{48})(?:\b|_)",
    ),
    d("nuget-key", &["oy2"], r"(?:\b|_)(oy2[a-z0-9]{43})(?:\b|_)"),
    d("crates-io-token", &["cio"], r"(?:\b|_)(cio[a-zA-Z0-9]{32})(?:\b|_)"),
    d(
        "clojars-token",
        &["clojars_"],
        r"(?i)\b(CLOJARS_[a-z0-9]{60})",
    ),
    d(
        "artifactory-key",
        &["AKCp", "cmVmd"],
        r"(?:\b|_)(AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})(?:\b|_)",
    ),
    d(
        "circleci-token",
        &["CCIPAT_", "CCIPRO_"],
        r"(?:\b|_)(CCIP(?:AT|RO)_[A-Za-z0-9]{22}_[a-f0-9]{40})(?:\b|_)",
    ),
    d("buildkite-token", &["bkua_"], r"(?:\b|_)(bkua_[a-f0-9]{40})(?:\b|_)"),
    d(
        "sonarqube-token",
        &["squ_", "sqp_", "sqa_"],
        r"(?:\b|_)((?:squ|sqp|sqa)_[a-f0-9]{40})(?:\b|_)",
    ),
    d(
        "terraform-cloud-token",
        &["atlasv1"],
        r"(?:\b|_)([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70})",
    ),
    d("pulumi-token", &["pul-"], r"(?:\b|_)(pul-[a-f0-9]{40})(?:\b|_)"),
    d(
        "doppler-token",
        &[
            "dp.pt.",
            "dp.st.",
            "dp.sa.",
            "dp.ct.",
            "dp.scim.",
            "dp.audit.",
        ],
        r"(?:\b|_)(dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_.\-]{40,})",
    ),
    d(
        "hashicorp-vault-token",
        &["hvs.", "hvb.", "hvr."],
        r"(?:\b|_)(hv[sbr]\.[A-Za-z0-9_\-]{24,})",
    ),
    d(
        "onepassword-token",
        &["ops_eyJ"],
        r"(?:\b|_)(ops_eyJ[a-zA-Z0-9+/]{200,}={0,3})",
    ).long(),
    g(
        "onepassword-secret-key",
        &["A3-"],
        r"(?:\b|_)(A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})(?:\b|_)",
        Gate::Entropy(3.5),
    ),
    d(
        "age-secret-key",
        &["AGE-SECRET-KEY-1"],
        r"(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})",
    ),
    d(
        "postman-api-key",
        &["PMAK-"],
        r"(?:\b|_)(PMAK-[a-f0-9]{24}-[a-f0-9]{34})(?:\b|_)",
    ),
    d("figma-token", &["figd_"], r"(?:\b|_)(figd_[A-Za-z0-9_\-]{40,})"),
    d(
        "youtrack-token",
        &["perm:"],
        r"(?:\b|_)(perm:[A-Za-z0-9+/=]{4,}\.[A-Za-z0-9+/=]{4,}\.[A-Za-z0-9]{20,})",
    ),
    d("prefect-token", &["pnu_"], r"(?:\b|_)(pnu_[a-zA-Z0-9]{36})(?:\b|_)"),
    d("readme-token", &["rdme_"], r"(?:\b|_)(rdme_[a-z0-9]{70})(?:\b|_)"),
    d("infracost-token", &["ico-"], r"(?:\b|_)(ico-[a-zA-Z0-9]{32})(?:\b|_)"),
    d(
        "harness-token",
        &["pat.", "sat."],
        r"(?:\b|_)((?:pat|sat)\.[a-zA-Z0-9_\-]{22}\.[a-zA-Z0-9]{24}\.[a-zA-Z0-9]{20})(?:\b|_)",
    ),
    d("octopus-deploy-key", &["API-"], r"(?:\b|_)(API-[A-Z0-9]{26})(?:\b|_)"),
    d(
        "frameio-token",
        &["fio-u-"],
        r"(?:\b|_)(fio-u-[A-Za-z0-9\-_=]{64})",
    ),
    d("typeform-token", &["tfp_"], r"(?:\b|_)(tfp_[A-Za-z0-9\-_.=]{59})"),
    // --- AI ---
    d(
        "openai-key",
        &["T3BlbkFJ"],
        r"(?:\b|_)(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,})",
    ),
    d(
        "openai-project-key",
        &["sk-proj-", "sk-svcacct-", "sk-admin-"],
        r"(?:\b|_)(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,})",
    ),
    d(
        "anthropic-key",
        &["sk-ant-"],
        r"(?:\b|_)(sk-ant-[a-z]{2,10}\d{2}-[A-Za-z0-9_\-]{32,})",
    ),
    d(
        "openrouter-key",
        &["sk-or-"],
        r"(?:\b|_)(sk-or-v\d-[a-f0-9]{64})(?:\b|_)",
    ),
    d(
        "huggingface-token",
        &["hf_", "api_org_"],
        r"(?:\b|_)((?:hf_|api_org_)[A-Za-z]{34})(?:\b|_)",
    ),
    d("groq-key", &["gsk_"], r"(?:\b|_)(gsk_[A-Za-z0-9]{48,56})(?:\b|_)"),
    d("perplexity-key", &["pplx-"], r"(?:\b|_)(pplx-[A-Za-z0-9]{48})(?:\b|_)"),
    d("replicate-token", &["r8_"], r"(?:\b|_)(r8_[A-Za-z0-9]{37})(?:\b|_)"),
    d("xai-key", &["xai-"], r"(?:\b|_)(xai-[A-Za-z0-9]{70,90})(?:\b|_)"),
    d(
        "langsmith-key",
        &["lsv2_"],
        r"(?:\b|_)(lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})(?:\b|_)",
    ),
    // --- chat, mail and webhooks ---
    d(
        "slack-config-token",
        &["xoxe"],
        r"(?i)\b(xoxe(?:\.xox[bp])?-\d-[A-Z0-9]{100,})",
    ).long(),
    d(
        "slack-token",
        &[
            "xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxo-", "xoxe-",
        ],
        r"(?:\b|_)(xox[baprseo]-[0-9A-Za-z\-]{10,})",
    ),
    d(
        "slack-app-token",
        &["xapp-"],
        r"(?i)\b(xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)",
    ),
    d(
        "slack-webhook",
        &["hooks.slack.com"],
        r"(hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,})",
    ),
    d(
        "discord-webhook",
        &["discord.com/api/webhooks", "discordapp.com/api/webhooks"],
        r"(discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,})",
    ),
    // Discord bot tokens have no prefix: the base64 of a numeric id, a
    // timestamp and an HMAC.
    g(
        "discord-bot-token",
        &[],
        r"(?:\b|_)([MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40})(?:\b|_)",
        Gate::Tokenish,
    ),
    d(
        "discord-token",
        &["discord"],
        named!("discord", r"[a-f0-9]{64}|[A-Za-z0-9=_\-]{32}"),
    ),
    d(
        "telegram-bot-token",
        &[":AA"],
        r"(\d{5,16}:AA[0-9A-Za-z_\-]{32,34})(?:\b|_)",
    ),
    d(
        "teams-webhook",
        &["webhook.office.com", "outlook.office.com/webhook"],
        r"(?i)((?:webhook\.office\.com/webhookb2|outlook\.office\.com/webhook)/[A-Za-z0-9@\-]{36,90}/IncomingWebhook/[A-Za-z0-9]{32}/[A-Za-z0-9\-]{36}(?:/[A-Za-z0-9_\-]+)?)",
    ),
    d(
        "google-chat-webhook",
        &["chat.googleapis.com"],
        r"(chat\.googleapis\.com/v1/spaces/[A-Za-z0-9_\-]+/messages\?[A-Za-z0-9_\-=&%.]*(?:key|token)=[A-Za-z0-9_\-%=]{20,})",
    ),
    d(
        "zapier-webhook",
        &["hooks.zapier.com"],
        r"(hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]{5,})",
    ),
    g(
        "mattermost-webhook",
        &["/hooks/"],
        r"/hooks/([a-z0-9]{26})(?:\b|_)",
        Gate::Tokenish,
    ),
    d("twilio-key", &["SK"], r"(?:\b|_)(SK[0-9a-fA-F]{32})(?:\b|_)"),
    d(
        "twilio-auth-token",
        &["twilio"],
        named!("twilio", r"[a-f0-9]{32}"),
    ),
    d(
        "sendgrid-key",
        &["SG."],
        r"(?:\b|_)(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})(?:\b|_)",
    ),
    d(
        "sendinblue-key",
        &["xkeysib-", "xsmtpsib-"],
        r"(?:\b|_)(x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16})(?:\b|_)",
    ),
    d("mailgun-key", &["key-"], r"(?:\b|_)(key-[a-f0-9]{32})(?:\b|_)"),
    d("mailchimp-key", &["-us"], r"(?:\b|_)([0-9a-f]{32}-us\d{1,2})(?:\b|_)"),
    d(
        "postmark-token",
        &["postmark"],
        named!(
            "postmark",
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        ),
    ),
    d(
        "webhook-signing-secret",
        &["whsec_"],
        r"(?:\b|_)(whsec_[A-Za-z0-9+/=]{24,})",
    ),
    // --- payments and commerce ---
    d(
        "stripe-key",
        &[
            "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
        ],
        r"(?:\b|_)((?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{10,247})(?:\b|_)",
    ),
    d(
        "square-token",
        &["sq0atp-", "sq0csp-", "EAAA"],
        r"(?:\b|_)((?:sq0atp|sq0csp)-[0-9A-Za-z\-_]{22,43}|EAAA[A-Za-z0-9_\-]{60})",
    ),
    d(
        "shopify-token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"(?:\b|_)(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})(?:\b|_)",
    ),
    d(
        "braintree-token",
        &["access_token$"],
        r"(access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32})",
    ),
    d(
        "razorpay-key",
        &["rzp_"],
        r"(?:\b|_)(rzp_(?:live|test)_[A-Za-z0-9]{14})(?:\b|_)",
    ),
    d(
        "flutterwave-key",
        &["FLWSECK"],
        r"(?:\b|_)(FLWSECK(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?)",
    ),
    d(
        "duffel-token",
        &["duffel_"],
        r"(?:\b|_)(duffel_(?:test|live)_[A-Za-z0-9_\-=]{43})",
    ),
    d(
        "shippo-token",
        &["shippo_"],
        r"(?:\b|_)(shippo_(?:live|test)_[a-fA-F0-9]{40})(?:\b|_)",
    ),
    d(
        "easypost-key",
        &["EZAK", "EZTK"],
        r"(?:\b|_)(EZ[AT]K[A-Za-z0-9]{54})(?:\b|_)",
    ),
    // --- SaaS and observability ---
    d(
        "sentry-token",
        &["sntrys_", "sntryu_"],
        r"(?:\b|_)(sntry[su]_[A-Za-z0-9+/=_\-]{40,})",
    ),
    d(
        "new-relic-key",
        &["NRAK-", "NRJS-", "NRII-"],
        r"(?:\b|_)(NRAK-[A-Z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9\-]{32})",
    ),
    d(
        "grafana-token",
        &["glsa_", "glc_", "eyJrIjoi"],
        r"(?:\b|_)(glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})",
    ).long(),
    d(
        "dynatrace-token",
        &["dt0c01."],
        r"(?:\b|_)(dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})(?:\b|_)",
    ),
    d(
        "datadog-key",
        &["datadog", "dd_api", "dd_app"],
        named!(r"(?:datadog|dd_api|dd_app)", r"[a-f0-9]{32}|[a-f0-9]{40}"),
    ),
    d(
        "linear-api-key",
        &["lin_api_"],
        r"(?:\b|_)(lin_api_[A-Za-z0-9]{40})(?:\b|_)",
    ),
    d(
        "notion-token",
        &["secret_", "ntn_"],
        r"(?:\b|_)((?:secret|ntn)_[A-Za-z0-9]{43,46})(?:\b|_)",
    ),
    d(
        "airtable-token",
        &["pat"],
        r"(?:\b|_)(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})(?:\b|_)",
    ),
    d(
        "atlassian-token",
        &["jira", "confluence", "atlassian"],
        named!(r"(?:jira|confluence|atlassian)", r"[A-Za-z0-9]{24}"),
    ),
    d(
        "okta-token",
        &["okta"],
        named!("okta", r"00[A-Za-z0-9_\-]{40}"),
    ),
    d(
        "mapbox-secret-token",
        &["sk.eyJ"],
        r"(?:\b|_)(sk\.eyJ[A-Za-z0-9_\-]{50,}\.[A-Za-z0-9_\-]{20,})",
    ),
    d("dropbox-token", &["sl."], r"(?:\b|_)(sl\.[A-Za-z0-9_\-]{130,})").long(),
    d("facebook-token", &["EAA"], r"(?:\b|_)(EAA[MC][A-Za-z0-9]{100,})").long(),
    d(
        "twitter-bearer-token",
        &["AAAAAAAAAAAAAAAAAAAAA"],
        r"(?:\b|_)(A{22}[A-Za-z0-9%]{80,100})",
    ),
    d(
        "adobe-client-secret",
        &["p8e-"],
        r"(?:\b|_)(p8e-[A-Za-z0-9]{32})(?:\b|_)",
    ),
    d("clickhouse-key", &["4b1d"], r"(?:\b|_)(4b1d[A-Za-z0-9]{38})(?:\b|_)"),
    d(
        "maxmind-license-key",
        &["_mmk"],
        r"(?:\b|_)([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?:\b|_)",
    ),
    d(
        "settlemint-token",
        &["sm_aat_", "sm_pat_", "sm_sat_"],
        r"(?:\b|_)(sm_[aps]at_[a-zA-Z0-9]{16})(?:\b|_)",
    ),
    d(
        "intra42-secret",
        &["s-s4t2"],
        r"(?:\b|_)(s-s4t2(?:ud|af)-[a-f0-9]{64})(?:\b|_)",
    ),
    // --- keys and signed tokens ---
    // A header alone is a key when the key's material follows (on its
    // line, or after `\n` in JSON), or the header ends the text or its line
    // and the next line is not an elision (`...`, `<key>`, `[…]`); a header
    // inside a sentence is prose about keys.
    Def {
        id: "private-key",
        kw: &["PRIVATE KEY"],
        re: r#"(-----BEGIN[ A-Z0-9_\-]*PRIVATE KEY(?: BLOCK)?-----)["'`]?[ \t]*(?:\\r\\n|\\n|\z|[A-Za-z0-9+/=]{16}|\r?\n(?:\z|[\x09-\x0d\x20-\x27\x29-\x2d\x2f-\x3b\x3d-\x5a\x5c-\x7e]))"#,
        gate: Gate::Token,
        multiline: true,
        forward: FORWARD,
    },
    d(
        "putty-private-key",
        &["PuTTY-User-Key-File-"],
        r"(PuTTY-User-Key-File-\d:\s*[a-z0-9\-]+)",
    ),
    d(
        "jwt",
        &["eyJ"],
        r"(?:\b|_)(ey[A-Za-z0-9]{15,}\.ey[A-Za-z0-9_\-]{15,}\.[A-Za-z0-9_\-]{10,}={0,2})",
    ).long(),
];
