//! Text helpers shared by near-duplicate detection, diffs and readers.

use similar::TextDiff;
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
pub const TOKENIZER_VERSION: u32 = 1;

/// English function words that carry no meaning in a query.
const EN_STOP: &[&str] = &[
    "a", "about", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "here",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our",
    "please", "s", "she", "should", "so", "t", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "us", "was", "we", "were", "what", "when", "where",
    "which", "who", "why", "will", "with", "would", "you", "your",
];

/// Chinese function words, longest first; a CJK run is split at them
/// before it is cut into bigrams, so that no bigram spans a function word.
const ZH_STOP: &[&str] = &[
    "为什么",
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

/// Light English normalization: plural and possessive forms to their stem.
fn normalize(word: &str) -> std::borrow::Cow<'_, str> {
    if !word.is_ascii() || word.len() <= 3 {
        return word.into();
    }
    if word.ends_with("ies") && word.len() > 4 {
        return format!("{}y", &word[..word.len() - 3]).into();
    }
    if word.ends_with("sses")
        || word.ends_with("ches")
        || word.ends_with("shes")
        || word.ends_with("xes")
    {
        return word[..word.len() - 2].into();
    }
    if word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        return word[..word.len() - 1].into();
    }
    word.into()
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
        for stop in ZH_STOP.iter().filter(|s| s.starts_with(run[i])) {
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
            let norm = normalize(word);
            if norm.len() == word.len() {
                // Unchanged: hand over the buffer instead of copying it.
                out.push(std::mem::take(word));
            } else {
                out.push(norm.into_owned());
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

/// MEMORY.md after a text merge without drivers: each conflicted hunk
/// reduced to our side (the generated block is regenerated anyway).
pub fn ours_of_conflicts(text: &str) -> String {
    let mut out = String::new();
    let mut state = 0; // 0 outside, 1 ours, 2 base or theirs
    for l in text.split_inclusive('\n') {
        if l.starts_with("<<<<<<< ") {
            state = 1;
        } else if state > 0 && (l.starts_with("||||||| ") || l.trim_end() == "=======") {
            state = 2;
        } else if state > 0 && l.starts_with(">>>>>>> ") {
            state = 0;
        } else if state < 2 {
            out.push_str(l);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_bigrams_and_stop_words() {
        assert_eq!(words("测试命令 is pnpm"), ["测试", "试命", "命令", "pnpm"]);
        assert_eq!(words("我们的测试命令是什么"), ["测试", "试命", "命令"]);
        assert_eq!(
            words("The user's tests and libraries"),
            ["user", "test", "library"]
        );
        assert_eq!(words("猫"), ["猫"]);
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(EN_STOP.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn jaccard() {
        assert_eq!(similarity("x y z", "x y z"), 1.0);
        assert_eq!(similarity("x y", "w z"), 0.0);
        assert!((similarity("b c d e", "b c d f") - 0.6).abs() < 1e-9);
    }

    #[test]
    fn conflict_markers_are_recognized_and_reduced_to_ours() {
        let text = "a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> other\nb\n";
        assert!(has_conflict_markers(text));
        assert_eq!(ours_of_conflicts(text), "a\nours\nb\n");
    }
}
