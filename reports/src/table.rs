//! Plain-text tables with aligned columns, for terminal summaries.

/// Renders `rows` under `header`, each column as wide as its widest cell.
/// Cells that parse as numbers are right-aligned.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| -> String {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, &w)| {
                if c.replace([',', '.', '%', 'x'], "").parse::<f64>().is_ok() {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut out = line(header.to_vec());
    out.push('\n');
    out.push_str(&line(
        widths
            .iter()
            .map(|&w| "-".repeat(w))
            .collect::<Vec<_>>()
            .iter()
            .map(|s| s.as_str())
            .collect(),
    ));
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.iter().map(|s| s.as_str()).collect()));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn aligns_columns_and_right_aligns_numbers() {
        let out = render(
            &["recipe", "states"],
            &[
                vec!["unfair-create".into(), "12".into()],
                vec!["etcd".into(), "1,234".into()],
            ],
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "recipe         states");
        assert_eq!(lines[1], "-------------  ------");
        assert_eq!(lines[2], "unfair-create      12");
        assert_eq!(lines[3], "etcd            1,234");
    }
}
