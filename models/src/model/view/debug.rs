//! A recipe's state as a typed value, read from its derived `Debug` text:
//! every recipe's state derives `Debug` (and no other structural trait),
//! so one reader here serves every recipe, present and future, with no
//! code in the recipes. The derived form is Rust's: `Name { field: v }`,
//! `Name(v, …)`, `Name`, `[…]`, `(…)`, `{k: v}`, strings, numbers and
//! booleans. The lockstep ids inside — sessions, a node's name, paths,
//! etcd keys — are rebuilt and written by their own `Display`, as the
//! store writes them; anything the reader does not follow is kept as its
//! text, never lost.

use super::Value;
use crate::ids::{Child, Key, Name, SessionId, ZPath};

/// The value `debug` (a derived `Debug` rendering) describes.
pub fn from_debug(debug: &str) -> Value {
    let mut p = Parser { s: debug, at: 0 };
    match p.value() {
        Some(tree) if p.rest().trim().is_empty() => typed(tree),
        _ => Value::Text(debug.to_string()),
    }
}

/// A derived `Debug` rendering, parsed.
#[derive(Clone, Debug, PartialEq)]
enum Tree {
    Str(String),
    /// A number or a bare word (`true`, a unit variant's name).
    Word(String),
    /// `Name { field: v, … }`.
    Named(String, Vec<(String, Tree)>),
    /// `Name(v, …)`.
    Call(String, Vec<Tree>),
    List(Vec<Tree>),
    Tuple(Vec<Tree>),
    Map(Vec<(Tree, Tree)>),
}

struct Parser<'a> {
    s: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.at..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    /// Takes `token` if the text goes on with it (after spaces).
    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Tree> {
        self.skip_space();
        let c = self.rest().chars().next()?;
        match c {
            '"' => self.string().map(Tree::Str),
            '[' => {
                self.at += 1;
                self.list(']', Parser::value).map(Tree::List)
            }
            '(' => {
                self.at += 1;
                self.list(')', Parser::value).map(Tree::Tuple)
            }
            '{' => {
                self.at += 1;
                self.list('}', |p| {
                    let k = p.value()?;
                    p.eat(":").then_some(())?;
                    Some((k, p.value()?))
                })
                .map(Tree::Map)
            }
            _ => {
                let word = self.word()?;
                if self.eat("{") {
                    let fields = self.list('}', |p| {
                        let k = p.word()?;
                        p.eat(":").then_some(())?;
                        Some((k, p.value()?))
                    })?;
                    Some(Tree::Named(word, fields))
                } else if self.rest().starts_with('(') {
                    self.at += 1;
                    Some(Tree::Call(word, self.list(')', Parser::value)?))
                } else {
                    Some(Tree::Word(word))
                }
            }
        }
    }

    /// Items read by `item`, a `,` apart (one may trail), up to `close`.
    fn list<T>(&mut self, close: char, item: impl Fn(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let mut out = Vec::new();
        loop {
            if self.eat(close.encode_utf8(&mut [0; 4])) {
                return Some(out);
            }
            out.push(item(self)?);
            if !self.eat(",") {
                self.eat(close.encode_utf8(&mut [0; 4])).then_some(())?;
                return Some(out);
            }
        }
    }

    /// An identifier or a number.
    fn word(&mut self) -> Option<String> {
        self.skip_space();
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-')))
            .unwrap_or(rest.len());
        let w = rest[..len].to_string();
        self.at += len;
        (len > 0).then_some(w)
    }

    /// A string literal, unescaped.
    fn string(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.rest().char_indices().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return Some(out);
                }
                '\\' => match chars.next()?.1 {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    other => out.push(other),
                },
                c => out.push(c),
            }
        }
        None
    }
}

/// A parsed rendering as a value: lockstep's ids as the store writes them,
/// options as options, every other name as a case of a sum type.
fn typed(t: Tree) -> Value {
    if let Some(id) = id_text(&t) {
        return Value::Text(id);
    }
    match t {
        Tree::Str(s) => Value::Text(s),
        Tree::Word(w) => match (w.as_str(), w.parse::<u64>()) {
            ("true", _) => Value::Bool(true),
            ("false", _) => Value::Bool(false),
            (_, Ok(n)) => Value::Int(n),
            (_, Err(_)) if w.starts_with(|c: char| c.is_alphabetic()) => Value::tag(&w),
            (_, Err(_)) => Value::Text(w),
        },
        Tree::Named(name, fields) => Value::Variant(
            name,
            Box::new(Value::Record(
                fields.into_iter().map(|(k, v)| (k, typed(v))).collect(),
            )),
        ),
        Tree::Call(name, mut args) => {
            let value = if args.len() == 1 {
                typed(args.remove(0))
            } else {
                Value::Tup(args.into_iter().map(typed).collect())
            };
            Value::Variant(name, Box::new(value))
        }
        Tree::List(items) => Value::Seq(items.into_iter().map(typed).collect()),
        Tree::Tuple(items) => Value::Tup(items.into_iter().map(typed).collect()),
        Tree::Map(kvs) => Value::Map(kvs.into_iter().map(|(k, v)| (typed(k), typed(v))).collect()),
    }
}

/// A lockstep id in its derived `Debug` form, rebuilt and written as the
/// store writes it: `SessionId { client: 0, incarnation: 0 }` is
/// `0x694d00000000`.
fn id_text(t: &Tree) -> Option<String> {
    if let Tree::Call(name, args) = t {
        // A path of text only: `Fixed("/lock")`.
        return match args.as_slice() {
            [Tree::Str(path)] if name == "Fixed" && path.starts_with('/') => Some(path.clone()),
            _ => None,
        };
    }
    let Tree::Named(name, _) = t else {
        return None;
    };
    match name.as_str() {
        "SessionId" => session(t).map(|s| s.to_string()),
        "Child" => child(t).map(|c| c.to_string()),
        "Key" => {
            let key = Key {
                prefix: self::name(field(t, "prefix")?)?,
                lease: option(field(t, "lease")?, session)?,
            };
            Some(key.to_string())
        }
        "Node" => {
            let path = ZPath::child(self::name(field(t, "dir")?)?, child(field(t, "child")?)?);
            Some(path.to_string())
        }
        _ => None,
    }
}

/// The field `k` of a `Name { … }`.
fn field<'t>(t: &'t Tree, k: &str) -> Option<&'t Tree> {
    let Tree::Named(_, fields) = t else {
        return None;
    };
    fields.iter().find(|(f, _)| f == k).map(|(_, v)| v)
}

fn number<T: std::str::FromStr>(t: &Tree) -> Option<T> {
    let Tree::Word(w) = t else {
        return None;
    };
    w.parse().ok()
}

fn name(t: &Tree) -> Option<Name> {
    let Tree::Str(s) = t else {
        return None;
    };
    Name::intern(s)
}

/// `Some(x)` or `None`, `x` read by `read`; `None` (of the outer option)
/// when it is neither.
fn option<T>(t: &Tree, read: impl Fn(&Tree) -> Option<T>) -> Option<Option<T>> {
    if let Tree::Word(w) = t {
        return (w == "None").then_some(None);
    }
    let Tree::Call(some, args) = t else {
        return None;
    };
    match args.as_slice() {
        [x] if some == "Some" => read(x).map(Some),
        _ => None,
    }
}

fn session(t: &Tree) -> Option<SessionId> {
    Some(SessionId {
        client: number(field(t, "client")?)?,
        incarnation: number(field(t, "incarnation")?)?,
        // A ZooKeeper session, or a lease not granted yet, has none.
        grant: field(t, "grant").map_or(Some(0), number)?,
    })
}

fn child(t: &Tree) -> Option<Child> {
    let Tree::Named(n, _) = t else {
        return None;
    };
    (n == "Child").then_some(())?;
    Some(Child {
        seq: option(field(t, "seq")?, number)?,
        prefix: name(field(t, "prefix")?)?,
        guid: option(field(t, "guid")?, session)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name;

    /// The example: a fair lock's holder, its node named by guid
    /// and sequence number, reads as the store names the node.
    #[test]
    fn a_recipe_state_reads_with_its_ids_as_the_store_writes_them() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Mine {
            node: Child,
            czxid: Option<u64>,
        }
        #[derive(Debug)]
        #[allow(dead_code)]
        enum State {
            Holding(Mine),
            Waiting { key: Key, leader_rev: u64 },
            Putting,
        }
        let guid = SessionId::first(1);
        let node = Child {
            seq: Some(3),
            prefix: name!("lock-"),
            guid: Some(guid),
        };
        let v = from_debug(&format!(
            "{:?}",
            State::Holding(Mine {
                node,
                czxid: Some(4)
            })
        ));
        assert_eq!(
            v.to_string(),
            format!("Holding(Mine(node: {node}, czxid: 4))"),
            "{v:?}"
        );
        let key = Key::of_lease(name!("/lock/"), guid);
        let v = from_debug(&format!("{:?}", State::Waiting { key, leader_rev: 2 }));
        assert_eq!(v.to_string(), format!("Waiting(key: {key}, leader_rev: 2)"));
        assert_eq!(
            v,
            Value::Variant(
                "Waiting".into(),
                Box::new(Value::Record(vec![
                    ("key".into(), Value::Text("/lock/694d00010000".into())),
                    ("leader_rev".into(), Value::Int(2)),
                ]))
            )
        );
        assert_eq!(
            from_debug(&format!("{:?}", State::Putting)),
            Value::tag("Putting")
        );
        let path = ZPath::child(name!("/lock"), node);
        assert_eq!(
            from_debug(&format!("{path:?}")),
            Value::Text(path.to_string())
        );
    }

    /// What the reader does not follow is kept as its text.
    #[test]
    fn an_unreadable_rendering_is_kept_as_text() {
        assert_eq!(from_debug("Odd { x: 1"), Value::Text("Odd { x: 1".into()));
        assert_eq!(
            from_debug("[1, (2, \"a\\\"b\"), {3: true}]"),
            Value::Seq(vec![
                Value::Int(1),
                Value::Tup(vec![Value::Int(2), Value::Text("a\"b".into())]),
                Value::Map(vec![(Value::Int(3), Value::Bool(true))]),
            ])
        );
    }
}
