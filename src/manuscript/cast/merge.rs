//! Merging the ways a book writes one person's name into one group.

use std::collections::HashMap;

use super::Form;
use crate::index::gender::Gender;

/// The forms of one person or place, as indexes into the forms.
pub(super) type Members = Vec<usize>;

/// The forms grouped by whom they name. A lone surname shared by several
/// people none of whom stands out ("Grant" beside "Dr. Grant" and "Mrs.
/// Grant") is nobody's, and left out.
pub(super) fn merge(forms: &[Form]) -> Vec<Members> {
    let mut owner: Vec<usize> = (0..forms.len()).collect();
    let mut order: Vec<usize> = (0..forms.len())
        .filter(|&at| !forms[at].collective)
        .collect();
    order.sort_by_key(|&at| std::cmp::Reverse(forms[at].core.len()));
    titled_into_longer(forms, &mut owner, &order);
    full_names(forms, &mut owner, &order);
    let nobody = lone_words(forms, &mut owner);
    let mut groups: HashMap<usize, Members> = HashMap::new();
    for at in (0..forms.len()).filter(|&at| !nobody[at]) {
        groups.entry(root(&owner, at)).or_default().push(at);
    }
    let mut groups: Vec<Members> = groups.into_values().collect();
    groups.sort();
    groups
}

/// The group form `at` belongs to now.
fn root(owner: &[usize], mut at: usize) -> usize {
    while owner[at] != at {
        at = owner[at];
    }
    at
}

/// The group of the one candidate, or of the one named at least twice as
/// often as any other.
fn pick(forms: &[Form], owner: &[usize], candidates: &[usize]) -> Option<usize> {
    let mut totals: Vec<(usize, u32)> = Vec::new();
    for &candidate in candidates {
        let group = root(owner, candidate);
        match totals.iter_mut().find(|(at, _)| *at == group) {
            Some((_, total)) => *total += forms[candidate].count,
            None => totals.push((group, forms[candidate].count)),
        }
    }
    totals.sort_by_key(|(_, total)| std::cmp::Reverse(*total));
    match totals.as_slice() {
        [(one, _)] => Some(*one),
        [(first, most), (_, next), ..] if *most >= next * 2 => Some(*first),
        _ => None,
    }
}

/// The forms that keep `keep`.
fn all(forms: &[Form], keep: impl Fn(usize) -> bool) -> Vec<usize> {
    (0..forms.len()).filter(|&at| keep(at)).collect()
}

/// A form's gender by its title, else by the pronouns that take it up or
/// take up its given name alone (one is enough where none of the other
/// gender stands beside it).
fn gender_of(forms: &[Form], at: usize) -> Option<Gender> {
    let form = &forms[at];
    form.title_gender().or_else(|| {
        let mut pronouns = form.pronouns;
        let given = forms.iter().position(|other| {
            other.title.is_none() && other.core.len() == 1 && other.core[0] == form.core[0]
        });
        if let Some(given) = given.filter(|_| form.core.len() >= 2) {
            pronouns[0] += forms[given].pronouns[0];
            pronouns[1] += forms[given].pronouns[1];
        }
        match pronouns {
            [he, 0] if he >= 1 => Some(Gender::He),
            [0, she] if she >= 1 => Some(Gender::She),
            _ => None,
        }
    })
}

/// A titled name into the longer one with the same title it begins:
/// "Lady Catherine" into "Lady Catherine de Bourgh".
fn titled_into_longer(forms: &[Form], owner: &mut [usize], order: &[usize]) {
    for &at in order {
        let form = &forms[at];
        if form.title.is_none() {
            continue;
        }
        let longer = all(forms, |other| {
            forms[other].whole
                && forms[other].title == form.title
                && forms[other].core.len() > form.core.len()
                && forms[other].core.starts_with(&form.core)
        });
        if let Some(into) = pick(forms, owner, &longer) {
            owner[at] = into;
        }
    }
}

/// A full name into its titled forms ("Miss Elizabeth Bennet"), or into the
/// one titled surname of its gender when no one else of that gender bears
/// the surname ("Fitzwilliam Darcy" and "Mr. Fitzwilliam Darcy" into "Mr.
/// Darcy", but neither "Elizabeth Bennet" nor "Lydia Bennet" into "Miss
/// Bennet").
fn full_names(forms: &[Form], owner: &mut [usize], order: &[usize]) {
    for &at in order {
        let form = &forms[at];
        if form.core.len() < 2 || root(owner, at) != at {
            continue;
        }
        if form.title.is_none() {
            let same = all(forms, |other| {
                forms[other].whole && forms[other].title.is_some() && forms[other].core == form.core
            });
            if let Some(into) = pick(forms, owner, &same) {
                owner[at] = into;
                continue;
            }
        }
        let Some(gender) = gender_of(forms, at) else {
            continue;
        };
        let surname = &form.core[form.core.len() - 1];
        let namesakes = all(forms, |other| {
            forms[other].core.len() >= 2
                && &forms[other].core[forms[other].core.len() - 1] == surname
                && forms[other].core[0] != form.core[0]
                && gender_of(forms, other) != Some(gender.other())
        });
        let titled = all(forms, |other| {
            forms[other].whole
                && forms[other].person_title()
                && forms[other].core.len() == 1
                && &forms[other].core[0] == surname
                && forms[other].title_gender() == Some(gender)
        });
        if let ([into], []) = (titled.as_slice(), namesakes.as_slice()) {
            owner[at] = root(owner, *into);
        }
    }
}

/// A lone word into the titled name it completes ("Fitzwilliam" into
/// "Colonel Fitzwilliam"; a bare "Darcy" into Mr. Darcy, the one man of
/// the name), else into the full name it begins ("Elizabeth"), else into
/// the one person whose surname it is. Answers, for each form, whether it
/// is nobody's: a word several people share, none standing out.
fn lone_words(forms: &[Form], owner: &mut [usize]) -> Vec<bool> {
    let mut nobody = vec![false; forms.len()];
    for at in 0..forms.len() {
        let form = &forms[at];
        if form.title.is_some() || form.core.len() != 1 || form.collective {
            continue;
        }
        let word = &form.core[0];
        let titled = all(forms, |other| {
            forms[other].whole && forms[other].person_title() && forms[other].core == form.core
        });
        let men: std::collections::BTreeSet<usize> = titled
            .iter()
            .filter(|&&other| forms[other].title_gender() == Some(Gender::He))
            .map(|&other| root(owner, other))
            .collect();
        let given = all(forms, |other| {
            forms[other].whole && forms[other].core.len() >= 2 && &forms[other].core[0] == word
        });
        let surname = all(forms, |other| {
            other != at && forms[other].whole && forms[other].core.last() == Some(word)
        });
        let into = if men.len() == 1 {
            men.first().copied()
        } else if !titled.is_empty() {
            pick(forms, owner, &titled)
        } else if !given.is_empty() {
            pick(forms, owner, &given)
        } else {
            pick(forms, owner, &surname)
        };
        nobody[at] =
            into.is_none() && !(titled.is_empty() && given.is_empty() && surname.is_empty());
        if let Some(into) = into {
            owner[at] = into;
        }
    }
    nobody
}
