//! Text helpers shared by near-duplicate detection, diffs and readers.

use similar::TextDiff;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The text git converted from, if `text` is what git's `core.autocrlf`
/// makes of a file with LF line endings on checkout: git converts only a
/// file with no CR at all, turning every LF into CRLF, so the conversion is
/// exactly undone when every CR is followed by an LF and every LF follows a
/// CR. (memoir writes its logs with LF, so a log with CRLF everywhere is
/// always such a conversion.)
pub fn git_crlf_undone(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut crlf = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => crlf += 1,
            b'\r' => return None,
            b'\n' if i == 0 || bytes[i - 1] != b'\r' => return None,
            _ => {}
        }
    }
    (crlf > 0).then(|| text.replace("\r\n", "\n"))
}

/// Is `c` a Chinese, Japanese or Korean character (written without spaces)?
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF)
}

/// Bumped whenever [`words`] changes what it returns (the persistent index
/// stores its output).
pub const TOKENIZER_VERSION: u32 = 2;

/// English function words that carry no meaning in a query or a memory:
/// articles, pronouns, auxiliaries, question words, prepositions and the
/// filler of a spoken question ("remind me", "do you remember", "what
/// happened before"). Sorted.
const EN_STOP: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "ago",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "anyone",
    "anything",
    "are",
    "around",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "cannot",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "down",
    "during",
    "each",
    "either",
    "else",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "had",
    "happen",
    "happened",
    "happening",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "know",
    "let",
    "lets",
    "many",
    "may",
    "me",
    "mention",
    "mentioned",
    "might",
    "mine",
    "more",
    "most",
    "much",
    "must",
    "my",
    "myself",
    "nor",
    "now",
    "of",
    "off",
    "often",
    "on",
    "once",
    "only",
    "onto",
    "or",
    "other",
    "others",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "quite",
    "rather",
    "really",
    "recall",
    "remember",
    "remembered",
    "remind",
    "reminded",
    "s",
    "same",
    "she",
    "should",
    "so",
    "some",
    "someone",
    "something",
    "sometimes",
    "still",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "though",
    "through",
    "to",
    "too",
    "under",
    "up",
    "upon",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "whatever",
    "when",
    "whenever",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "yes",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
];

/// Chinese function words and question fillers, longest first; a CJK run is split at them
/// before it is cut into bigrams, so that no bigram spans a function word.
const ZH_STOP: &[&str] = &[
    "什么时候",
    "为什么",
    "还记得",
    "有没有",
    "是不是",
    "我们",
    "你们",
    "他们",
    "什么",
    "怎么",
    "如何",
    "哪些",
    "哪个",
    "是否",
    "应该",
    "请问",
    "一下",
    "可以",
    "哪里",
    "多久",
    "多少",
    "几个",
    "几次",
    "一共",
    "告诉",
    "提醒",
    "记得",
    "之前",
    "之后",
    "以前",
    "以后",
    "这个",
    "那个",
    "这些",
    "那些",
    "时候",
    "还是",
    "或者",
    "已经",
    "就是",
    "但是",
    "因为",
    "所以",
    "如果",
    "然后",
    "还有",
    "一些",
    "几周",
    "几年",
    "几天",
    "几月",
    "每个",
    "每周",
    "每天",
    "每次",
    "一次",
    "大概",
    "需要",
    "个月",
    "的",
    "了",
    "用",
    "吗",
    "呢",
    "吧",
    "啊",
    "是",
    "在",
    "和",
    "与",
    "我",
    "你",
    "他",
];

/// English past forms and irregular plurals that no suffix rule reaches,
/// with their base word, sorted by the first: a question in one tense
/// ("where did we go", "who led it") finds a memory in another ("went",
/// "leading"). Forms that are also common words of another meaning ("left",
/// "saw", "rose", "bit") are left out.
const EN_IRREGULAR: &[(&str, &str)] = &[
    ("ate", "eat"),
    ("became", "become"),
    ("began", "begin"),
    ("begun", "begin"),
    ("bent", "bend"),
    ("blew", "blow"),
    ("bought", "buy"),
    ("broke", "break"),
    ("broken", "break"),
    ("brought", "bring"),
    ("built", "build"),
    ("came", "come"),
    ("caught", "catch"),
    ("children", "child"),
    ("chose", "choose"),
    ("chosen", "choose"),
    ("drank", "drink"),
    ("drawn", "draw"),
    ("drew", "draw"),
    ("driven", "drive"),
    ("drove", "drive"),
    ("eaten", "eat"),
    ("fallen", "fall"),
    ("fed", "feed"),
    ("feet", "foot"),
    ("fell", "fall"),
    ("felt", "feel"),
    ("flew", "fly"),
    ("flown", "fly"),
    ("forgot", "forget"),
    ("forgotten", "forget"),
    ("fought", "fight"),
    ("found", "find"),
    ("froze", "freeze"),
    ("frozen", "freeze"),
    ("gave", "give"),
    ("given", "give"),
    ("gone", "go"),
    ("got", "get"),
    ("gotten", "get"),
    ("grew", "grow"),
    ("grown", "grow"),
    ("heard", "hear"),
    ("held", "hold"),
    ("hid", "hide"),
    ("hidden", "hide"),
    ("hung", "hang"),
    ("kept", "keep"),
    ("knew", "know"),
    ("known", "know"),
    ("led", "lead"),
    ("lent", "lend"),
    ("lost", "lose"),
    ("made", "make"),
    ("meant", "mean"),
    ("men", "man"),
    ("met", "meet"),
    ("mice", "mouse"),
    ("paid", "pay"),
    ("ran", "run"),
    ("rang", "ring"),
    ("ridden", "ride"),
    ("rode", "ride"),
    ("said", "say"),
    ("sang", "sing"),
    ("sat", "sit"),
    ("seen", "see"),
    ("sent", "send"),
    ("shot", "shoot"),
    ("slept", "sleep"),
    ("sold", "sell"),
    ("sought", "seek"),
    ("spent", "spend"),
    ("spoke", "speak"),
    ("spoken", "speak"),
    ("stole", "steal"),
    ("stolen", "steal"),
    ("stood", "stand"),
    ("struck", "strike"),
    ("swam", "swim"),
    ("taken", "take"),
    ("taught", "teach"),
    ("teeth", "tooth"),
    ("thought", "think"),
    ("threw", "throw"),
    ("thrown", "throw"),
    ("told", "tell"),
    ("took", "take"),
    ("understood", "understand"),
    ("went", "go"),
    ("women", "woman"),
    ("won", "win"),
    ("wore", "wear"),
    ("worn", "wear"),
    ("written", "write"),
    ("wrote", "write"),
];

/// English normalization: an irregular form to its base word, then the
/// Snowball English (Porter2) stemmer, so that "moved", "moving" and
/// "move", or "clothes" and "clothing", are one term. Only words of
/// lowercase ASCII letters: a word with digits ("oauth2", "v1") or of
/// another script is kept as it is.
fn normalize(word: &str) -> std::borrow::Cow<'_, str> {
    use std::sync::OnceLock;
    static STEMMER: OnceLock<rust_stemmers::Stemmer> = OnceLock::new();
    if word.len() <= 2 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.into();
    }
    let stemmer =
        STEMMER.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));
    match EN_IRREGULAR.binary_search_by(|(form, _)| (*form).cmp(word)) {
        Ok(i) => stemmer.stem(EN_IRREGULAR[i].1).into_owned().into(),
        Err(_) => stemmer.stem(word),
    }
}

/// The function words of [`ZH_STOP`] that start with `c`, longest first.
/// Looked up by their first character: most characters start none, and
/// asking each of the 70 whether it starts with every character of a
/// Chinese text was a quarter of building a large store's index.
fn zh_stops_from(c: char) -> &'static [&'static str] {
    use std::sync::OnceLock;
    static BY_FIRST: OnceLock<Vec<(char, Vec<&'static str>)>> = OnceLock::new();
    let by_first = BY_FIRST.get_or_init(|| {
        let mut by_first: Vec<(char, Vec<&'static str>)> = Vec::new();
        for stop in ZH_STOP {
            let Some(first) = stop.chars().next() else {
                continue;
            };
            match by_first.iter_mut().find(|(c, _)| *c == first) {
                // In ZH_STOP's order: longest first.
                Some((_, stops)) => stops.push(stop),
                None => by_first.push((first, vec![stop])),
            }
        }
        by_first.sort_by_key(|(c, _)| *c);
        by_first
    });
    match by_first.binary_search_by_key(&c, |(first, _)| *first) {
        Ok(i) => &by_first[i].1,
        Err(_) => &[],
    }
}

fn push_cjk(run: &[char], out: &mut Vec<String>) {
    // Split at function words, then cut each piece into overlapping bigrams.
    let mut piece: Vec<char> = Vec::new();
    let mut i = 0;
    let flush = |piece: &mut Vec<char>, out: &mut Vec<String>| {
        match piece.len() {
            0 => {}
            1 => out.push(piece[0].to_string()),
            _ => out.extend(piece.windows(2).map(|w| {
                let mut b = String::with_capacity(w[0].len_utf8() + w[1].len_utf8());
                b.push(w[0]);
                b.push(w[1]);
                b
            })),
        }
        piece.clear();
    };
    'outer: while i < run.len() {
        for stop in zh_stops_from(run[i]) {
            // Every function word starts with a CJK character: compare lazily.
            let mut len = 0;
            let matches = stop.chars().all(|c| {
                len += 1;
                run.get(i + len - 1) == Some(&c)
            });
            if matches {
                flush(&mut piece, out);
                i += len;
                continue 'outer;
            }
        }
        piece.push(run[i]);
        i += 1;
    }
    flush(&mut piece, out);
}

/// The search terms of `text`: lowercase words split at anything that is
/// not a letter or digit, English stop words dropped and plurals reduced;
/// CJK runs split at function words and cut into overlapping character
/// bigrams (a lone character stands alone), since CJK text has no spaces.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_word = |word: &mut String, out: &mut Vec<String>| {
        // EN_STOP is sorted: a binary search per word, not a scan.
        if !word.is_empty() && EN_STOP.binary_search(&word.as_str()).is_err() {
            match normalize(word) {
                // Unchanged: hand over the buffer instead of copying it.
                std::borrow::Cow::Borrowed(_) => out.push(std::mem::take(word)),
                std::borrow::Cow::Owned(norm) => out.push(norm),
            }
        }
        word.clear();
    };
    let push = |c: char, word: &mut String, cjk: &mut Vec<char>, out: &mut Vec<String>| {
        if is_cjk(c) {
            flush_word(word, out);
            cjk.push(c);
        } else {
            if !cjk.is_empty() {
                push_cjk(cjk, out);
                cjk.clear();
            }
            if c.is_alphanumeric() {
                word.push(c);
            } else {
                flush_word(word, out);
            }
        }
    };
    for c in text.chars() {
        if c.is_ascii() {
            push(c.to_ascii_lowercase(), &mut word, &mut cjk, &mut out);
        } else {
            for l in c.to_lowercase() {
                push(l, &mut word, &mut cjk, &mut out);
            }
        }
    }
    flush_word(&mut word, &mut out);
    push_cjk(&cjk, &mut out);
    out
}

/// Jaccard similarity of two texts' word sets (0..=1).
pub fn similarity(a: &str, b: &str) -> f64 {
    let a: BTreeSet<String> = words(a).into_iter().collect();
    let b: BTreeSet<String> = words(b).into_iter().collect();
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let common = a.intersection(&b).count() as f64;
    common / a.union(&b).count() as f64
}

/// A unified diff of a file's two versions, as git shows one: a side that
/// does not exist (`None`) is empty and labelled `/dev/null`.
pub fn file_diff(old: Option<&str>, new: Option<&str>, old_label: &str, new_label: &str) -> String {
    unified_diff(
        old.unwrap_or(""),
        new.unwrap_or(""),
        if old.is_some() {
            old_label
        } else {
            "/dev/null"
        },
        if new.is_some() {
            new_label
        } else {
            "/dev/null"
        },
    )
}

/// A unified diff of two texts with labelled sides (empty when equal).
pub fn unified_diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    let diff = TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_lines(old, new);
    diff.unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string()
}

/// Does a file hold git's conflict markers (a text merge without drivers)?
pub fn has_conflict_markers(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("<<<<<<< "))
        && text.lines().any(|l| l.starts_with(">>>>>>> "))
}

/// `text` with control characters (C0 but tab and, if `newlines`, LF; DEL;
/// C1) and bidirectional overrides shown as `\u{..}` escapes.
pub fn printable(text: &str, newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\t' && !(newlines && c == '\n'))
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if unsafe_char(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// `1 memory`, `2 memories`: a count and its noun, singular for one.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A rough token count for budgets: a quarter token per ASCII character,
/// one per other character (CJK is about a token a character), rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    let (ascii, other) = text.chars().fold((0usize, 0usize), |(a, o), c| {
        if c.is_ascii() {
            (a + 1, o)
        } else {
            (a, o + 1)
        }
    });
    ascii.div_ceil(4) + other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_estimated_a_quarter_per_ascii_character_one_per_other() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("测试命令"), 4);
        assert_eq!(estimate_tokens("a测"), 2);
    }

    #[test]
    fn the_function_words_by_first_character_are_the_list_in_its_order() {
        for stop in ZH_STOP {
            let first = stop.chars().next().unwrap();
            let want: Vec<&str> = ZH_STOP
                .iter()
                .copied()
                .filter(|s| s.starts_with(first))
                .collect();
            assert_eq!(zh_stops_from(first), want.as_slice(), "{first}");
        }
        assert!(zh_stops_from('车').is_empty());
        assert!(zh_stops_from('a').is_empty());
    }

    #[test]
    fn cjk_bigrams_and_stop_words() {
        assert_eq!(words("测试命令 is pnpm"), ["测试", "试命", "命令", "pnpm"]);
        assert_eq!(words("我们的测试命令是什么"), ["测试", "试命", "命令"]);
        assert_eq!(
            words("The user's tests and libraries"),
            ["user", "test", "librari"]
        );
        assert_eq!(words("猫"), ["猫"]);
    }

    #[test]
    fn stop_words_and_irregular_forms_are_sorted_for_binary_search() {
        assert!(EN_STOP.windows(2).all(|w| w[0] < w[1]));
        assert!(EN_IRREGULAR.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn english_words_meet_across_tense_and_inflection() {
        let same = |a: &str, b: &str| assert_eq!(words(a), words(b), "{a} / {b}");
        same("moved", "moving");
        same("move", "moves");
        same("clothes", "clothing");
        same("worked", "working");
        same("led", "leading");
        same("went", "go");
        same("took", "taking");
        same("deployment", "deployments");
        // Question filler is no term at all.
        assert_eq!(words("can you remind me what I said"), ["say"]);
        // Words with digits, and other scripts, are kept as they are.
        assert_eq!(words("oauth2 v1 café"), ["oauth2", "v1", "café"]);
    }

    #[test]
    fn jaccard() {
        assert_eq!(similarity("x y z", "x y z"), 1.0);
        assert_eq!(similarity("x y", "w z"), 0.0);
        assert!((similarity("b c d e", "b c d f") - 0.6).abs() < 1e-9);
    }

    #[test]
    fn conflict_markers_are_recognized() {
        let text = "a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> other\nb\n";
        assert!(has_conflict_markers(text));
        assert!(!has_conflict_markers("a\n=======\nb\n"));
    }
}
