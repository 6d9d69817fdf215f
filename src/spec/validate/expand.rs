//! The sweep grid: `zip:` groups and the expansion of every combination into scenarios.

use super::*;

/// The grid axes: groups of fields that vary together, in expansion order.
pub(super) fn zip_groups(
    s: &ScenarioSpec,
    columns: &Columns,
    diags: &mut Diags,
) -> Vec<Vec<usize>> {
    let mut group_of: Vec<usize> = (0..FIELDS.len()).collect();
    for group in &s.zip {
        let mut members = Vec::new();
        for name in &group.value {
            match FIELDS.iter().position(|f| *f == name.value) {
                Some(field) => members.push(field),
                None => {
                    let help =
                        did_you_mean(&name.value, FIELDS).map(|b| format!("did you mean `{b}`?"));
                    diags.error(
                        name.referenced,
                        format!("`{}` is not a scenario field", name.value),
                        help,
                    );
                }
            }
        }
        if members.len() < 2 {
            diags.error(group.referenced, "a `zip` group needs at least two fields", None);
            continue;
        }
        let len = columns.len(members[0]);
        for &field in &members {
            if columns.len(field) != len {
                diags.error(
                    group.referenced,
                    format!(
                        "zipped fields must have equal lengths: `{}` has {} values, `{}` has {}",
                        FIELDS[members[0]],
                        len,
                        FIELDS[field],
                        columns.len(field)
                    ),
                    None,
                );
            }
            if group_of[field] != field {
                diags.error(
                    group.referenced,
                    format!("`{}` is in two zip groups", FIELDS[field]),
                    None,
                );
            }
        }
        let leader = members.iter().copied().min().unwrap_or(0);
        for &field in &members {
            group_of[field] = leader;
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for field in 0..FIELDS.len() {
        if group_of[field] == field {
            groups.push((0..FIELDS.len()).filter(|&f| group_of[f] == field).collect());
        }
    }
    groups
}

/// Expands the grid and builds one `Scenario` per point.
pub(super) fn expand(
    columns: &Columns,
    groups: &[Vec<usize>],
    methods: &Spanned<MethodsSpec>,
    model: Option<&ModelChoice>,
    simulate: bool,
    diags: &mut Diags,
) -> Vec<ScenarioPoint> {
    let lens: Vec<usize> = groups.iter().map(|g| columns.len(g[0]).max(1)).collect();
    let total = lens.iter().try_fold(1usize, |acc, &l| acc.checked_mul(l));
    let Some(total) = total.filter(|&t| t <= MAX_POINTS) else {
        diags.error(
            columns.written[TOPOLOGY].unwrap_or(Location::UNKNOWN),
            format!("the scenario grid has more than {MAX_POINTS} points"),
            Some("sweep fewer values, or use `zip:` for fields that vary together".into()),
        );
        return Vec::new();
    };
    let mut used = [false; FIELDS.len()];
    let mut points = Vec::with_capacity(total);
    let mut seen = std::collections::HashSet::with_capacity(total);
    let mut index = vec![0usize; FIELDS.len()];
    let mut odometer = vec![0usize; groups.len()];
    for _ in 0..total {
        for (g, group) in groups.iter().enumerate() {
            for &field in group {
                index[field] = odometer[g];
            }
        }
        if let Some(point) = build(columns, &index, &mut used, diags) {
            check_methods(&point, columns, methods, model, simulate, diags);
            if seen.insert(format!("{:?}", point.scenario)) {
                points.push(point);
            }
        }
        for g in (0..groups.len()).rev() {
            odometer[g] += 1;
            if odometer[g] < lens[g] {
                break;
            }
            odometer[g] = 0;
        }
        if diags.0.len() >= 20 {
            break;
        }
    }
    for field in 0..FIELDS.len() {
        if let Some(location) = columns.written[field]
            && !used[field]
            && diags.0.is_empty()
        {
            let families: Vec<String> = TopologyKind::reading(FIELDS[field])
                .enumerate()
                .map(|(i, kind)| {
                    if i == 0 {
                        format!("`topology.kind: {}`", kind.as_str())
                    } else {
                        format!("`{}`", kind.as_str())
                    }
                })
                .collect();
            let topology_kinds = crate::console::alternatives(&families);
            let applies = match field {
                _ if !families.is_empty() => topology_kinds.as_str(),
                SCOUTING => "`switching.kind: scouting`",
                DATELINE => "`routing: dimension_order` or `duato` on a torus",
                TIE_BREAK => "`routing: dimension_order` or `duato` on a torus of even radix",
                HOTSPOT => "`traffic.pattern: hotspot`",
                BURST => "`traffic.injection_process: on_off`",
                BROADCAST_ORDER => "`traffic.broadcast_fraction` > 0",
                CIRCUIT_BACKOFF | CIRCUIT_RETRY_LIMIT => "`switching.kind: circuit`",
                LENGTH_MIN | LENGTH_MAX => "`message_length_distribution: bimodal` or `uniform`",
                ESCAPE => "`routing: duato` or `nbc` (the routings with escape channels)",
                _ => "other settings",
            };
            diags.error(
                location,
                format!(
                    "`{}` applies only to {applies}, which no point of this spec uses",
                    FIELDS[field]
                ),
                Some(format!("remove `{}`", FIELDS[field])),
            );
        }
    }
    points
}
