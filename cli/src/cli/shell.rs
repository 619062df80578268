//! Commands printed for the user to paste into a POSIX shell: every
//! argument quoted where the shell would read it as anything but itself
//! (a file named `a;touch PWNED;b.toml` must not run `touch`).

use std::borrow::Cow;

/// One argument as a POSIX shell reads it back unchanged: as it is when
/// every character is one the shell takes literally, else in single quotes,
/// each `'` inside written `'\''` (the only character single quotes cannot
/// hold).
pub fn quote(arg: &str) -> Cow<'_, str> {
    let literal = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !arg.is_empty() && arg.chars().all(literal) {
        Cow::Borrowed(arg)
    } else {
        Cow::Owned(format!("'{}'", arg.replace('\'', r"'\''")))
    }
}

/// `lockstep` and its arguments, each quoted: a command line to paste.
pub fn lockstep_command<S: AsRef<str>>(args: &[S]) -> String {
    let mut line = String::from("lockstep");
    for arg in args {
        line.push(' ');
        line.push_str(&quote(arg.as_ref()));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_stay_as_they_are() {
        for word in [
            "scenarios/healthy.toml",
            "--seed",
            "18446744073709551615",
            "a-b_c.d:e=f@g%h+i,j",
        ] {
            assert_eq!(quote(word), word);
        }
    }

    #[test]
    fn anything_the_shell_would_read_is_single_quoted() {
        assert_eq!(quote("a;touch PWNED;b.toml"), "'a;touch PWNED;b.toml'");
        assert_eq!(quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b\nc"), "'a b\nc'");
        assert_eq!(
            lockstep_command(&["run", "x y.toml", "--seed", "3"]),
            "lockstep run 'x y.toml' --seed 3"
        );
    }

    /// What `sh -c 'printf %s ARG'` prints is the argument itself.
    #[cfg(unix)]
    #[test]
    fn the_shell_reads_the_quoted_argument_back_unchanged() {
        for arg in [
            "a;touch PWNED;b.toml",
            "it's \"q\" `x` $HOME \\ *",
            "",
            "plain.toml",
            "tab\there",
        ] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf %s {}", quote(arg)))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), arg);
        }
    }
}
