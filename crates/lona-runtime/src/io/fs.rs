//! Files for processes: each call runs on the blocking pool
//! (`blocking.rs`), and the process waits for it as in `receive`.

use std::io;
use std::path::{Path, PathBuf};

use super::blocking::spawn_blocking;

async fn pooled<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    spawn_blocking(f).await?
}

/// The whole file.
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let p = path.as_ref().to_path_buf();
    pooled(move || std::fs::read(p)).await
}

/// The whole file as text (`InvalidData` if it is not UTF-8).
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let p = path.as_ref().to_path_buf();
    pooled(move || std::fs::read_to_string(p)).await
}

/// Writes `data` as the whole file (made or truncated).
pub async fn write(path: impl AsRef<Path>, data: impl Into<Vec<u8>>) -> io::Result<()> {
    let (p, d) = (path.as_ref().to_path_buf(), data.into());
    pooled(move || std::fs::write(p, d)).await
}

/// Appends `data` to the file (made if missing).
pub async fn append(path: impl AsRef<Path>, data: impl Into<Vec<u8>>) -> io::Result<()> {
    let (p, d) = (path.as_ref().to_path_buf(), data.into());
    pooled(move || {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)?
            .write_all(&d)
    })
    .await
}

/// The entries of a directory, sorted.
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<Vec<PathBuf>> {
    let p = path.as_ref().to_path_buf();
    pooled(move || {
        let mut v = std::fs::read_dir(p)?
            .map(|e| e.map(|e| e.path()))
            .collect::<io::Result<Vec<_>>>()?;
        v.sort();
        Ok(v)
    })
    .await
}

/// Removes a file.
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let p = path.as_ref().to_path_buf();
    pooled(move || std::fs::remove_file(p)).await
}

/// Whether something exists at `path`.
pub async fn exists(path: impl AsRef<Path>) -> io::Result<bool> {
    let p = path.as_ref().to_path_buf();
    pooled(move || p.try_exists()).await
}

/// A file read line by line: each refill reads 64 KB on the pool, and the
/// lines are cut in the process. Closed when dropped.
pub struct Lines {
    file: Option<std::fs::File>,
    buf: Vec<u8>,
    eof: bool,
    max_line: usize,
}

impl Lines {
    /// Opens `path`. A line longer than `max_line` bytes is an
    /// `InvalidData` error (a file without newlines cannot make the
    /// process buffer it whole).
    pub async fn open(path: impl AsRef<Path>, max_line: usize) -> io::Result<Lines> {
        let p = path.as_ref().to_path_buf();
        let file = pooled(move || std::fs::File::open(p)).await?;
        Ok(Lines {
            file: Some(file),
            buf: Vec::new(),
            eof: false,
            max_line,
        })
    }

    /// The next line without its `\n` (and `\r`), or `None` at the end.
    pub async fn next_line(&mut self) -> io::Result<Option<String>> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.buf.drain(..=i).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return String::from_utf8(line)
                    .map(Some)
                    .map_err(|_| io::ErrorKind::InvalidData.into());
            }
            if self.buf.len() > self.max_line {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "line too long"));
            }
            if self.eof {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let line = std::mem::take(&mut self.buf);
                return String::from_utf8(line)
                    .map(Some)
                    .map_err(|_| io::ErrorKind::InvalidData.into());
            }
            let mut file = self.file.take().ok_or_else(|| io::Error::other("closed"))?;
            let (file, chunk) = pooled(move || {
                use std::io::Read;
                let mut chunk = vec![0u8; 64 * 1024];
                let n = file.read(&mut chunk)?;
                chunk.truncate(n);
                Ok((file, chunk))
            })
            .await?;
            self.file = Some(file);
            if chunk.is_empty() {
                self.eof = true;
            }
            self.buf.extend_from_slice(&chunk);
        }
    }
}
