//! The distribution cookie: the shared secret two nodes prove they know
//! in the handshake, read from `~/.erlang.cookie` as Erlang does.
//!
//! Erlang's rules, followed here: the file holds the cookie (trailing
//! white space ignored); when there is no file, one is created with 20
//! random upper-case letters and mode 0400, so the next node (Erlang's
//! or Lona's) started by the same user finds the same cookie.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where Erlang keeps the cookie: `$HOME/.erlang.cookie`.
pub fn default_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".erlang.cookie"))
}

/// The cookie in `path`, creating the file with a fresh random cookie
/// when it does not exist.
pub fn read_or_create(path: &Path) -> Result<String, super::StartError> {
    use super::StartError::{CookieFile, EmptyCookieFile};
    match fs::read_to_string(path) {
        Ok(s) => {
            let c = s.trim_end().to_string();
            if c.is_empty() {
                return Err(EmptyCookieFile(path.to_path_buf()));
            }
            Ok(c)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let cookie = random_cookie();
            let mut opts = fs::OpenOptions::new();
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o400);
            }
            match opts.open(path) {
                Ok(mut f) => {
                    f.write_all(cookie.as_bytes())
                        .map_err(|e| CookieFile(path.to_path_buf(), "write", e))?;
                    Ok(cookie)
                }
                // Another node created it in between: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_or_create(path),
                Err(e) => Err(CookieFile(path.to_path_buf(), "create", e)),
            }
        }
        Err(e) => Err(CookieFile(path.to_path_buf(), "read", e)),
    }
}

/// 20 upper-case letters, as `erl` makes them, from the operating
/// system's random source (the hash seed of `RandomState`, drawn per
/// instance, mixed with the time).
fn random_cookie() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::with_capacity(20);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    let mut x = h.finish();
    for i in 0..20 {
        if i == 10 {
            let mut h2 = std::collections::hash_map::RandomState::new().build_hasher();
            h2.write_u64(x);
            x = h2.finish();
        }
        out.push((b'A' + (x % 26) as u8) as char);
        x /= 26;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_created_with_twenty_letters_and_read_back() {
        let dir = std::env::temp_dir().join(format!("lona-cookie-{}", std::process::id()));
        let _ = fs::create_dir_all(&dir);
        let path = dir.join("cookie");
        let _ = fs::remove_file(&path);
        let c = read_or_create(&path).unwrap();
        assert_eq!(c.len(), 20);
        assert!(c.bytes().all(|b| b.is_ascii_uppercase()));
        assert_eq!(read_or_create(&path).unwrap(), c);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o400);
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn trailing_white_space_is_not_part_of_the_cookie() {
        let path = std::env::temp_dir().join(format!("lona-cookie-ws-{}", std::process::id()));
        fs::write(&path, "SECRET\n").unwrap();
        assert_eq!(read_or_create(&path).unwrap(), "SECRET");
        fs::write(&path, "\n").unwrap();
        assert!(matches!(
            read_or_create(&path).unwrap_err(),
            super::super::StartError::EmptyCookieFile(p) if p == path
        ));
        let _ = fs::remove_file(&path);
    }
}
