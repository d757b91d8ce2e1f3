//! The forge a repository is published on, derived from its `origin` remote, and the
//! subjects of the commits the register names.

use git2::{Oid, Repository};

/// A web forge's repository page (`https://github.com/owner/name`), for linking commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forge {
    /// `https://host/path` without a trailing slash or `.git`.
    base: String,
}

impl Forge {
    /// The forge of the repository's `remote.origin.url`, if one is configured and has a web form.
    #[must_use]
    pub fn of_repository(repository: &Repository) -> Option<Self> {
        let config = repository.config().ok()?;
        let url = config.get_string("remote.origin.url").ok()?;
        Self::from_remote_url(&url)
    }

    /// The https page of a remote URL (`https://`, `http://`, `ssh://`, `git://` or scp-like
    /// `git@host:path`); credentials and ssh ports are dropped. `None` for local paths and
    /// for anything with characters a forge path never has.
    #[must_use]
    pub fn from_remote_url(url: &str) -> Option<Self> {
        let url = url.trim();
        let rest = ["https://", "http://", "ssh://", "git://", "git+ssh://"]
            .iter()
            .find_map(|scheme| url.strip_prefix(scheme));
        let (authority, path) = match rest {
            Some(rest) => rest.split_once('/')?,
            // scp-like syntax: `[user@]host:path`, told apart from a local path by the colon
            // before any slash.
            None => {
                let (authority, path) = url.split_once(':')?;
                // A one-letter "host" is a Windows drive (`C:/repos/coherent`).
                if authority.len() < 2 || authority.contains('/') || path.starts_with("//") {
                    return None;
                }
                (authority, path)
            }
        };
        let host_port = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        let host = match (
            rest.is_some() && url.starts_with("http"),
            host_port.split_once(':'),
        ) {
            // An explicit web port is part of the site; an ssh port is not.
            (true, _) | (false, None) => host_port,
            (false, Some((host, _))) => host,
        };
        let path = path.trim_matches('/');
        let path = path.strip_suffix(".git").unwrap_or(path);
        let host_ok = !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:".contains(&b));
        let path_ok = !path.is_empty()
            && path
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~/".contains(&b))
            && !path.split('/').any(|part| part.is_empty() || part == "..");
        (host_ok && path_ok).then(|| Self {
            base: format!("https://{host}/{path}"),
        })
    }

    /// The forge's page of one commit.
    #[must_use]
    pub fn commit_url(&self, commit: &str) -> String {
        format!("{}/commit/{commit}", self.base)
    }

    /// The repository's page.
    #[must_use]
    pub fn base(&self) -> &str {
        &self.base
    }
}

/// The first line of `commit`'s message, if the repository has that commit.
#[must_use]
pub fn commit_subject(repository: &Repository, commit: &str) -> Option<String> {
    let oid = Oid::from_str(commit).ok()?;
    let found = repository.find_commit(oid).ok()?;
    let subject = String::from_utf8_lossy(found.summary_bytes()?).into_owned();
    Some(subject)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls_become_https_pages_without_credentials() {
        for (url, page) in [
            (
                "git@github.com:coherent/engine.git",
                "https://github.com/coherent/engine",
            ),
            (
                "https://github.com/coherent/engine.git",
                "https://github.com/coherent/engine",
            ),
            (
                "https://x-access-token:secret@github.com/coherent/engine",
                "https://github.com/coherent/engine",
            ),
            (
                "ssh://git@gitlab.example.org:2222/team/coherent.git/",
                "https://gitlab.example.org/team/coherent",
            ),
            (
                "http://forge.local:3000/me/coherent",
                "https://forge.local:3000/me/coherent",
            ),
            (
                "git://codeberg.org/me/coherent.git",
                "https://codeberg.org/me/coherent",
            ),
        ] {
            assert_eq!(
                Forge::from_remote_url(url).map(|forge| forge.base().to_owned()),
                Some(page.to_owned()),
                "{url}"
            );
        }
        let forge = Forge::from_remote_url("git@github.com:a/b.git").unwrap();
        assert_eq!(
            forge.commit_url("abc123"),
            "https://github.com/a/b/commit/abc123"
        );
    }

    #[test]
    fn local_paths_and_odd_characters_have_no_page() {
        for url in [
            "/srv/git/coherent.git",
            "./coherent",
            "file:///srv/git/coherent.git",
            "C:/repos/coherent",
            "https://github.com/a/\"onmouseover=alert(1)",
            "https://github.com/a/../b",
            "https://github.com/",
            "git@github.com:",
        ] {
            assert_eq!(Forge::from_remote_url(url), None, "{url}");
        }
    }
}
