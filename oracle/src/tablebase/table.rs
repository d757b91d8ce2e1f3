//! Solved tables: the file format, its header, and the on-demand cache of tables.
//!
//! A file is the line `COHERENT-TB 1`, one line of JSON header, then one byte per index
//! (see `Outcome::from_byte`). The header records the ending, the position counts by result
//! for each side to move, the longest mates and the sha256 of the body, which loading checks.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use shakmaty::{Color, Role};

use super::TablebaseError;
use super::ending::Ending;
use super::index::Indexer;
use super::movegen::{NONE, Placement};
use super::outcome::Outcome;
use super::solve::solve;
use crate::integrity;

/// First line of every table file.
const MAGIC: &str = "COHERENT-TB 1";

/// Positions of one side to move by result (indexed placements: white king in a1–d1–d4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// Side to move mates.
    pub win: u64,
    /// Neither side can force mate.
    pub draw: u64,
    /// Side to move is mated.
    pub loss: u64,
    /// Illegal placements (overlap, or the side not to move in check).
    pub invalid: u64,
    /// Longest forced mate for the side to move, in plies.
    pub max_win_plies: u8,
    /// Longest forced mate against the side to move, in plies.
    pub max_loss_plies: u8,
}

/// The header line of a table file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// The ending, e.g. `KBNK`.
    pub ending: String,
    /// Index order of the body.
    pub layout: String,
    /// Number of body bytes.
    pub entries: u64,
    /// Counts with White to move.
    pub white_to_move: Counts,
    /// Counts with Black to move.
    pub black_to_move: Counts,
    /// Longest forced mate of the ending in moves (strong side to move).
    pub max_dtm_moves: u8,
    /// sha256 of the body, hex.
    pub sha256: String,
}

/// What `oracle tb generate` reports: the table written, its header and the time it took.
#[derive(Debug, Clone, Serialize)]
pub struct Generated {
    /// The file written.
    pub file: String,
    /// Seconds the solver took.
    pub seconds: f64,
    /// The table's header.
    pub header: Header,
}

impl fmt::Display for Generated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = &self.header;
        writeln!(
            f,
            "{} solved in {:.2} s -> {}",
            h.ending, self.seconds, self.file
        )?;
        writeln!(f, "longest forced mate: {} moves", h.max_dtm_moves)?;
        for (side, c) in [("white", &h.white_to_move), ("black", &h.black_to_move)] {
            writeln!(
                f,
                "{side} to move: win {} draw {} loss {} illegal {} (longest win {} plies, longest loss {} plies)",
                c.win, c.draw, c.loss, c.invalid, c.max_win_plies, c.max_loss_plies
            )?;
        }
        writeln!(f, "sha256 {}", h.sha256)
    }
}

/// One solved ending in memory.
#[derive(Debug)]
pub struct Table {
    ending: Ending,
    header: Header,
    values: Vec<u8>,
}

impl Table {
    /// Wraps solved values with their computed header.
    fn new(ending: Ending, values: Vec<u8>) -> Table {
        let ix = Indexer::new(ending.piece_count());
        let count = |side: &[u8]| {
            let mut c = Counts::default();
            for &byte in side {
                match Outcome::from_byte(byte) {
                    None => c.invalid += 1,
                    Some(Outcome::Draw) => c.draw += 1,
                    Some(Outcome::Win(n)) => {
                        c.win += 1;
                        c.max_win_plies = c.max_win_plies.max(n);
                    }
                    Some(Outcome::Loss(n)) => {
                        c.loss += 1;
                        c.max_loss_plies = c.max_loss_plies.max(n);
                    }
                }
            }
            c
        };
        let (white, black) = values.split_at(ix.per_side());
        let (white_to_move, black_to_move) = (count(white), count(black));
        let longest = white_to_move.max_win_plies.max(black_to_move.max_win_plies);
        let names: Vec<String> = ending
            .layout()
            .iter()
            .map(|&(c, r)| match c {
                Color::White => r.upper_char().to_string(),
                Color::Black => r.char().to_string(),
            })
            .collect();
        let header = Header {
            ending: ending.to_string(),
            layout: format!(
                "side to move (white, black) x white king in a1,b1,c1,d1,b2,c2,d2,c3,d3,d4 x 64 squares (a1=0..h8=63) for each of {}; byte 0 draw, 255 illegal, n+1 mate in n plies (odd n: side to move mates)",
                names[1..].join(",")
            ),
            entries: values.len() as u64,
            white_to_move,
            black_to_move,
            max_dtm_moves: longest.div_ceil(2),
            sha256: integrity::sha256_hex(&values),
        };
        Table {
            ending,
            header,
            values,
        }
    }

    /// The ending this table solves.
    #[must_use]
    pub fn ending(&self) -> &Ending {
        &self.ending
    }

    /// The header (counts, longest mate, checksum).
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Value of a placement in table order (any orientation); `None` if illegal.
    #[must_use]
    pub fn outcome(&self, squares: &[u8], stm: Color) -> Option<Outcome> {
        let ix = Indexer::new(self.ending.piece_count());
        Outcome::from_byte(self.values[ix.index(squares, stm)])
    }

    /// Counts over every legal placement with `stm` to move, without symmetry reduction
    /// (each square assignment once; equal pieces such as two bishops count in both orders).
    #[must_use]
    pub fn unreduced_counts(&self, stm: Color) -> Counts {
        let n = self.ending.piece_count();
        let mut c = Counts::default();
        let mut squares = [0u8; 4];
        for code in 0..1usize << (6 * n) {
            for (slot, sq) in squares[..n].iter_mut().enumerate() {
                *sq = ((code >> (6 * slot)) & 63) as u8;
            }
            let p = Placement::new(&self.ending.layout(), &squares);
            if p.has_overlap() {
                continue;
            }
            match self.outcome(&squares[..n], stm) {
                None => c.invalid += 1,
                Some(Outcome::Draw) => c.draw += 1,
                Some(Outcome::Win(k)) => {
                    c.win += 1;
                    c.max_win_plies = c.max_win_plies.max(k);
                }
                Some(Outcome::Loss(k)) => {
                    c.loss += 1;
                    c.max_loss_plies = c.max_loss_plies.max(k);
                }
            }
        }
        c
    }

    /// Serialises the table into its file bytes.
    fn to_bytes(&self) -> Vec<u8> {
        let header = serde_json::to_string(&self.header).expect("header serialises");
        let mut bytes = format!("{MAGIC}\n{header}\n").into_bytes();
        bytes.extend_from_slice(&self.values);
        bytes
    }

    /// Parses and checks file bytes written by `to_bytes` for `ending`.
    fn from_bytes(ending: &Ending, path: &Path, bytes: &[u8]) -> Result<Table, TablebaseError> {
        let corrupt = |reason: String| TablebaseError::Corrupt {
            path: path.to_owned(),
            reason,
        };
        let mut lines = bytes.splitn(3, |&b| b == b'\n');
        if lines.next() != Some(MAGIC.as_bytes()) {
            return Err(corrupt(format!("first line is not `{MAGIC}`")));
        }
        let header: Header = serde_json::from_slice(lines.next().unwrap_or_default())
            .map_err(|e| corrupt(format!("header: {e}")))?;
        let values = lines.next().unwrap_or_default().to_vec();
        if header.ending != ending.to_string() {
            return Err(corrupt(format!(
                "holds {} instead of {ending}",
                header.ending
            )));
        }
        if values.len() != Indexer::new(ending.piece_count()).size() {
            return Err(corrupt(format!("body has {} bytes", values.len())));
        }
        if integrity::sha256_hex(&values) != header.sha256 {
            return Err(corrupt(
                "body does not match the header's sha256".to_owned(),
            ));
        }
        let table = Table::new(ending.clone(), values);
        if table.header != header {
            return Err(corrupt("header counts do not match the body".to_owned()));
        }
        Ok(table)
    }

    /// Writes the table to `path` atomically (temp file, fsync, rename).
    pub fn write(&self, path: &Path) -> Result<(), TablebaseError> {
        Ok(integrity::write_atomically(path, &self.to_bytes())?)
    }

    /// Reads a table of `ending` from `path`, checking its header and checksum.
    pub fn read(ending: &Ending, path: &Path) -> Result<Table, TablebaseError> {
        let bytes = fs::read(path).map_err(|source| TablebaseError::Io {
            path: path.to_owned(),
            source,
        })?;
        Table::from_bytes(ending, path, &bytes)
    }
}

/// A piece on a square, as the lookups take them.
pub type Man = (Color, Role, u8);

/// Value of any pawnless position of at most four men using already loaded `tables`.
///
/// Colours are swapped (and the board mirrored) when Black holds the stronger material.
fn lookup(
    table_of: impl Fn(&Ending) -> Result<Arc<Table>, TablebaseError>,
    men: &[Man],
    stm: Color,
) -> Result<Outcome, TablebaseError> {
    let roles = |color: Color| -> Vec<Role> {
        men.iter()
            .filter(|m| m.0 == color && m.1 != Role::King)
            .map(|m| m.1)
            .collect()
    };
    let (ending, flip) = Ending::from_material(&roles(Color::White), &roles(Color::Black));
    if ending.is_bare_kings() {
        return Ok(Outcome::Draw);
    }
    let table = table_of(&ending)?;
    let oriented: Vec<Man> = men
        .iter()
        .map(|&(c, r, sq)| if flip { (!c, r, sq ^ 56) } else { (c, r, sq) })
        .collect();
    let mut used = [false; 4];
    let mut squares = [0u8; 4];
    for (slot, &(c, r)) in ending.layout().iter().enumerate() {
        let i = (0..oriented.len())
            .find(|&i| !used[i] && oriented[i].0 == c && oriented[i].1 == r)
            .ok_or_else(|| TablebaseError::NotLoaded(ending.to_string()))?;
        used[i] = true;
        squares[slot] = oriented[i].2;
    }
    let stm = if flip { !stm } else { stm };
    table
        .outcome(&squares, stm)
        .ok_or(TablebaseError::IllegalPosition)
}

/// The men of a placement that are still on the board.
fn men_of(p: &Placement) -> Vec<Man> {
    (0..p.len)
        .filter(|&i| p.squares[i] != NONE)
        .map(|i| (p.pieces[i].0, p.pieces[i].1, p.squares[i]))
        .collect()
}

/// One ending's slot: its own lock, so that concurrent users solve it once while other
/// endings (its smaller ones, which it needs) stay available.
type Slot = Arc<Mutex<Option<Arc<Table>>>>;

/// Solved tables, loaded from the cache directory or generated on first use.
#[derive(Debug)]
pub struct Tablebase {
    cache_dir: Option<PathBuf>,
    tables: Mutex<HashMap<Ending, Slot>>,
}

impl Tablebase {
    /// A tablebase caching files in `cache_dir` (`None`: memory only).
    #[must_use]
    pub fn new(cache_dir: Option<PathBuf>) -> Tablebase {
        Tablebase {
            cache_dir,
            tables: Mutex::new(HashMap::new()),
        }
    }

    /// `$XDG_CACHE_HOME/coherent-oracle/tb`, else `~/.cache/coherent-oracle/tb`.
    #[must_use]
    pub fn default_cache_dir() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("coherent-oracle").join("tb"))
    }

    /// Where `ending` is cached, if caching is on.
    #[must_use]
    pub fn cache_path(&self, ending: &Ending) -> Option<PathBuf> {
        self.cache_dir.as_ref().map(|d| d.join(file_name(ending)))
    }

    /// The table of `ending`: from memory, else the cache file, else solved (and cached).
    pub fn table(&self, ending: &Ending) -> Result<Arc<Table>, TablebaseError> {
        let slot = Arc::clone(lock(&self.tables).entry(ending.clone()).or_default());
        let mut slot = lock(&slot);
        if let Some(t) = slot.as_ref() {
            return Ok(Arc::clone(t));
        }
        let cached = self.cache_path(ending).filter(|p| p.exists());
        let table = match cached {
            Some(path) => Table::read(ending, &path)?,
            None => {
                let table = self.generate(ending)?;
                if let Some(path) = self.cache_path(ending) {
                    table.write(&path)?;
                }
                table
            }
        };
        let table = Arc::new(table);
        *slot = Some(Arc::clone(&table));
        Ok(table)
    }

    /// Solves `ending` afresh (its smaller endings come through `table`).
    pub fn generate(&self, ending: &Ending) -> Result<Table, TablebaseError> {
        let mut subtables = HashMap::new();
        for slot in 2..ending.piece_count() {
            let mut rest = ending.layout();
            rest.remove(slot);
            let side = |c: Color| -> Vec<Role> {
                rest.iter()
                    .filter(|p| p.0 == c && p.1 != Role::King)
                    .map(|p| p.1)
                    .collect()
            };
            let (sub, _) = Ending::from_material(&side(Color::White), &side(Color::Black));
            if !sub.is_bare_kings() && !subtables.contains_key(&sub) {
                let t = self.table(&sub)?;
                subtables.insert(sub, t);
            }
        }
        let capture_value = |p: &Placement, stm: Color| {
            let table_of = |e: &Ending| {
                subtables
                    .get(e)
                    .cloned()
                    .ok_or_else(|| TablebaseError::NotLoaded(e.to_string()))
            };
            lookup(table_of, &men_of(p), stm).expect("legal capture into a loaded smaller ending")
        };
        Ok(Table::new(ending.clone(), solve(ending, &capture_value)))
    }

    /// Value of a position given by its men, loading the tables it needs.
    pub fn outcome(&self, men: &[Man], stm: Color) -> Result<Outcome, TablebaseError> {
        let roles = |color: Color| -> Vec<Role> {
            men.iter()
                .filter(|m| m.0 == color && m.1 != Role::King)
                .map(|m| m.1)
                .collect()
        };
        let (ending, _) = Ending::from_material(&roles(Color::White), &roles(Color::Black));
        if ending.piece_count() > super::ending::MAX_PIECES || men.iter().any(|m| m.1 == Role::Pawn)
        {
            return Err(TablebaseError::NotCovered(format!("the ending {ending}")));
        }
        lookup(|e| self.table(e), men, stm)
    }
}

/// Locks a mutex; poisoning cannot leave a table half-written (slots are set in one store).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// File name of a table: `KBNK.ctb`.
#[must_use]
pub fn file_name(ending: &Ending) -> String {
    format!("{ending}.ctb")
}
