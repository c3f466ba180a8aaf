//! Hybrid retrieval over a project's chunks (RepGen §3.1): BM25 with code-aware
//! tokens plus dense MiniLM embeddings in an HNSW index, combined as
//! `(1 − α)·bm25 + α·dense` over min-max-normalised scores, then the best candidates
//! reranked by a cross-encoder (or by the bi-encoder's cosine when there is none).

use instant_distance::{Builder, HnswMap, Point, Search};
use replayground_shared::repro::RankedContext;

use super::chunk::{Chunk, chunk_project};
use super::embed::{CrossEncoder, EmbedError, Embedder, cosine};
use crate::dependencies::ProjectIndex;
use crate::project::Project;
use crate::training_loops::{TrainingLoop, training_loops};

/// Chunks embedded per progress report.
const PROGRESS_BATCH: usize = 16;

/// How retrieval weighs and cuts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrievalConfig {
    /// Weight of the dense score against BM25 (RepGen: 0.55).
    pub alpha: f32,
    /// Contexts returned.
    pub top_k: usize,
    /// Candidates taken from each retriever and reranked.
    pub candidates: usize,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            alpha: 0.55,
            top_k: 5,
            candidates: 20,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RetrievalError {
    #[error(
        "The project's Python files hold no functions, classes or statements to search. Upload the folder with the code."
    )]
    NoChunks,
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error("The search index was not finished: the job was cancelled.")]
    Cancelled,
}

/// Splits code and prose into search words: `train_step` → `train step trainstep`,
/// `CrossEntropyLoss` → `cross entropy loss crossentropyloss`, `nn.Module` → `nn module`;
/// then English stop words go and words are stemmed, so a report's prose meets the code.
pub struct CodeTokenizer {
    prose: bm25::DefaultTokenizer,
}

impl Default for CodeTokenizer {
    fn default() -> Self {
        let prose = bm25::DefaultTokenizer::builder()
            .language_mode(bm25::Language::English)
            .normalization(true)
            .stopwords(true)
            .stemming(true)
            .build();
        Self { prose }
    }
}

/// Python words that say nothing about what a chunk does.
const CODE_STOP_WORDS: [&str; 16] = [
    "self", "def", "return", "import", "from", "class", "none", "true", "false", "lambda", "pass", "elif", "else",
    "try", "except", "cls",
];

/// The parts of an identifier: split at `_`, lower→upper and letter↔digit boundaries.
pub fn identifier_parts(word: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for piece in word.split('_').filter(|piece| !piece.is_empty()) {
        let chars: Vec<char> = piece.chars().collect();
        let mut current = String::new();
        let mut piece_parts = Vec::new();
        for (i, &c) in chars.iter().enumerate() {
            let boundary = i > 0 && {
                let previous = chars[i - 1];
                let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
                (previous.is_lowercase() && c.is_uppercase())
                    || (previous.is_uppercase() && c.is_uppercase() && next_lower)
                    || (previous.is_alphabetic() != c.is_alphabetic())
            };
            if boundary && !current.is_empty() {
                piece_parts.push(std::mem::take(&mut current).to_lowercase());
            }
            current.push(c);
        }
        if !current.is_empty() {
            piece_parts.push(current.to_lowercase());
        }
        // `NaN`, `getX`: one-letter parts are not words, so the piece stays whole.
        let single_letter = piece_parts
            .iter()
            .any(|part| part.len() == 1 && part.chars().all(char::is_alphabetic));
        if single_letter && piece_parts.len() > 1 {
            parts.push(piece.to_lowercase());
        } else {
            parts.extend(piece_parts);
        }
    }
    parts
}

impl CodeTokenizer {
    /// The words before stemming: identifier parts, plus the whole identifier when it had several.
    pub fn words(text: &str) -> Vec<String> {
        let mut words = Vec::new();
        for word in text
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
        {
            let parts = identifier_parts(word);
            if parts.len() > 1 {
                words.push(parts.concat());
            }
            words.extend(parts);
        }
        words.retain(|word| !CODE_STOP_WORDS.contains(&word.as_str()));
        words
    }
}

impl bm25::Tokenizer for CodeTokenizer {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        self.prose.tokenize(&Self::words(input_text).join(" "))
    }
}

/// A unit vector in the HNSW index; distance is `1 − cosine`.
#[derive(Debug, Clone)]
struct Vector(Vec<f32>);

impl Point for Vector {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - self.0.iter().zip(&other.0).map(|(a, b)| a * b).sum::<f32>()
    }
}

struct DenseIndex {
    vectors: Vec<Vec<f32>>,
    hnsw: HnswMap<Vector, usize>,
}

/// A project's chunks indexed for hybrid retrieval.
pub struct Retriever {
    chunks: Vec<Chunk>,
    /// What each chunk is searched by: path, name and code.
    documents: Vec<String>,
    loops: Vec<TrainingLoop>,
    bm25: bm25::Embedder<u32, CodeTokenizer>,
    scorer: bm25::Scorer<usize, u32>,
    dense: Option<DenseIndex>,
    index: ProjectIndex,
}

impl Retriever {
    /// Chunks the project, finds its training loops, and indexes the chunks for BM25 and
    /// (with an embedder) dense search. `progress(done, total)` follows the embedding.
    pub fn build(
        project: &Project,
        embedder: Option<&Embedder>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Self, RetrievalError> {
        Self::build_until(project, embedder, progress, &|| false)
    }

    /// Like [`Retriever::build`], and gives up with [`RetrievalError::Cancelled`] between
    /// embedding batches once `stop()` says so: a cancelled job's thread stops within a batch.
    pub fn build_until(
        project: &Project,
        embedder: Option<&Embedder>,
        progress: &mut dyn FnMut(usize, usize),
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<Self, RetrievalError> {
        let chunks = chunk_project(project);
        if chunks.is_empty() {
            return Err(RetrievalError::NoChunks);
        }
        let loops: Vec<TrainingLoop> = project
            .python_files()
            .flat_map(|file| training_loops(&file.path, &file.text))
            .collect();
        let documents: Vec<String> = chunks
            .iter()
            .map(|chunk| format!("{} {}\n{}", chunk.path, chunk.name, chunk.text))
            .collect();
        let corpus: Vec<&str> = documents.iter().map(String::as_str).collect();
        let bm25 = bm25::EmbedderBuilder::<u32, CodeTokenizer>::with_tokenizer_and_fit_to_corpus(
            CodeTokenizer::default(),
            &corpus,
        )
        .build();
        let mut scorer = bm25::Scorer::new();
        for (id, document) in documents.iter().enumerate() {
            scorer.upsert(&id, bm25.embed(document));
        }
        let dense = match embedder {
            Some(embedder) => {
                let mut vectors = Vec::with_capacity(documents.len());
                progress(0, documents.len());
                for batch in corpus.chunks(PROGRESS_BATCH) {
                    if stop() {
                        return Err(RetrievalError::Cancelled);
                    }
                    vectors.extend(embedder.embed(batch)?);
                    progress(vectors.len(), documents.len());
                }
                let points: Vec<Vector> = vectors.iter().cloned().map(Vector).collect();
                let ids: Vec<usize> = (0..points.len()).collect();
                let hnsw = Builder::default().seed(7).build(points, ids);
                Some(DenseIndex { vectors, hnsw })
            }
            None => None,
        };
        Ok(Self {
            chunks,
            documents,
            loops,
            bm25,
            scorer,
            dense,
            index: ProjectIndex::new(project),
        })
    }

    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// The training loops of the whole project, in path and line order.
    pub fn training_loops(&self) -> &[TrainingLoop] {
        &self.loops
    }

    /// Whether the index has dense vectors (it was built with an embedder).
    pub fn has_dense(&self) -> bool {
        self.dense.is_some()
    }

    /// The `top_k` best chunks for `query`, best first, with their code and dependencies.
    /// Without an embedder (here or at build time) only BM25 ranks, and `dense` is 0.
    pub fn retrieve(
        &self,
        query: &str,
        config: &RetrievalConfig,
        embedder: Option<&Embedder>,
        reranker: Option<&CrossEncoder>,
    ) -> Vec<RankedContext> {
        let candidates = config.candidates.max(config.top_k).max(1);
        let mut bm25_scores = vec![0.0_f32; self.chunks.len()];
        for scored in self.scorer.matches(&self.bm25.embed(query)) {
            bm25_scores[scored.id] = scored.score;
        }
        let mut pool: Vec<usize> = top_indices(&bm25_scores, candidates)
            .into_iter()
            .filter(|&i| bm25_scores[i] > 0.0)
            .collect();

        // The query's vector, when both the index and the caller have the model.
        let query_vector = match (&self.dense, embedder) {
            (Some(_), Some(embedder)) => match embedder.embed_one(query) {
                Ok(vector) => Some(vector),
                Err(error) => {
                    tracing::warn!(%error, "embedding the query failed; ranking by BM25 only");
                    None
                }
            },
            _ => None,
        };
        if let (Some(dense), Some(vector)) = (&self.dense, &query_vector) {
            let mut search = Search::default();
            for item in dense.hnsw.search(&Vector(vector.clone()), &mut search).take(candidates) {
                if !pool.contains(item.value) {
                    pool.push(*item.value);
                }
            }
        }
        if pool.is_empty() {
            // Nothing matched any word and there is no dense score: fall back to file order.
            pool = (0..self.chunks.len().min(candidates)).collect();
        }

        let dense_raw: Vec<f32> = match (&self.dense, &query_vector) {
            (Some(dense), Some(vector)) => pool.iter().map(|&i| cosine(vector, &dense.vectors[i])).collect(),
            _ => vec![0.0; pool.len()],
        };
        let bm25_raw: Vec<f32> = pool.iter().map(|&i| bm25_scores[i]).collect();
        let bm25_norm = min_max(&bm25_raw);
        let has_dense = query_vector.is_some();
        let dense_norm = if has_dense {
            min_max(&dense_raw)
        } else {
            vec![0.0; pool.len()]
        };
        let mut ranked: Vec<Candidate> = pool
            .iter()
            .enumerate()
            .map(|(slot, &chunk)| Candidate {
                chunk,
                bm25: bm25_norm[slot],
                dense: dense_norm[slot],
                cosine: dense_raw[slot],
                // Without dense scores BM25 alone ranks, on the same 0..1 scale.
                score: if has_dense {
                    (1.0 - config.alpha) * bm25_norm[slot] + config.alpha * dense_norm[slot]
                } else {
                    bm25_norm[slot]
                },
                rerank: None,
            })
            .collect();
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
        ranked.truncate(candidates);

        self.rerank(query, &mut ranked, reranker, has_dense);
        self.select(ranked, config.top_k)
    }

    /// Reorders the candidates by the cross-encoder, else by the bi-encoder's cosine.
    fn rerank(&self, query: &str, ranked: &mut [Candidate], reranker: Option<&CrossEncoder>, has_dense: bool) {
        if let Some(reranker) = reranker {
            let passages: Vec<&str> = ranked.iter().map(|c| self.documents[c.chunk].as_str()).collect();
            match reranker.score(query, &passages) {
                Ok(scores) => {
                    for (candidate, score) in ranked.iter_mut().zip(scores) {
                        candidate.rerank = Some(score);
                    }
                }
                Err(error) => tracing::warn!(%error, "the cross-encoder failed; keeping the hybrid order"),
            }
        } else if has_dense {
            for candidate in ranked.iter_mut() {
                candidate.rerank = Some(candidate.cosine);
            }
        }
        if ranked.iter().all(|c| c.rerank.is_some()) {
            ranked.sort_by(|a, b| {
                b.rerank
                    .unwrap_or(f32::MIN)
                    .total_cmp(&a.rerank.unwrap_or(f32::MIN))
                    .then(b.score.total_cmp(&a.score))
            });
        }
    }

    /// The first `top_k` candidates that do not overlap a better one (a class and its
    /// own method would repeat the same code).
    fn select(&self, ranked: Vec<Candidate>, top_k: usize) -> Vec<RankedContext> {
        let mut chosen: Vec<&Chunk> = Vec::new();
        let mut out = Vec::new();
        for candidate in ranked {
            if out.len() >= top_k {
                break;
            }
            let chunk = &self.chunks[candidate.chunk];
            let overlaps = chosen.iter().any(|other| {
                other.path == chunk.path
                    && other
                        .spans
                        .iter()
                        .any(|a| chunk.spans.iter().any(|b| a.0 <= b.1 && b.0 <= a.1))
            });
            if overlaps {
                continue;
            }
            chosen.push(chunk);
            let training_loop = self.loops.iter().any(|found| {
                found.path == chunk.path
                    && chunk
                        .spans
                        .iter()
                        .any(|&(start, end)| start <= found.line && found.line <= end)
            });
            out.push(RankedContext {
                path: chunk.path.clone(),
                name: chunk.name.clone(),
                kind: chunk.kind,
                start_line: chunk.start_line,
                end_line: chunk.end_line,
                score: candidate.rerank.unwrap_or(candidate.score),
                bm25: candidate.bm25,
                dense: candidate.dense,
                rerank: candidate.rerank,
                training_loop,
                code: self.index.context(&chunk.path, &chunk.spans),
            });
        }
        out
    }
}

struct Candidate {
    chunk: usize,
    bm25: f32,
    dense: f32,
    cosine: f32,
    score: f32,
    rerank: Option<f32>,
}

/// Indices of the `k` largest values, largest first (ties by index).
fn top_indices(values: &[f32], k: usize) -> Vec<usize> {
    let mut indices: Vec<usize> = (0..values.len()).collect();
    indices.sort_by(|&a, &b| values[b].total_cmp(&values[a]).then(a.cmp(&b)));
    indices.truncate(k);
    indices
}

/// Scales values to 0..=1; equal values become 1 when positive (all equally good), else 0.
fn min_max(values: &[f32]) -> Vec<f32> {
    let min = values.iter().copied().fold(f32::INFINITY, f32::min);
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !(max - min).is_normal() {
        let flat = if max > 0.0 { 1.0 } else { 0.0 };
        return vec![flat; values.len()];
    }
    values.iter().map(|v| (v - min) / (max - min)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_into_their_words() {
        assert_eq!(identifier_parts("train_step"), ["train", "step"]);
        assert_eq!(identifier_parts("CrossEntropyLoss"), ["cross", "entropy", "loss"]);
        assert_eq!(identifier_parts("HTTPServer2"), ["http", "server", "2"]);
        assert_eq!(identifier_parts("__init__"), ["init"]);
        assert_eq!(identifier_parts("NaN"), ["nan"]);
        let words = CodeTokenizer::words("self.optimizer.zero_grad() # NaN");
        assert_eq!(words, ["optimizer", "zerograd", "zero", "grad", "nan"]);
    }

    #[test]
    fn min_max_scales_and_handles_flat_scores() {
        assert_eq!(min_max(&[1.0, 3.0, 2.0]), [0.0, 1.0, 0.5]);
        assert_eq!(min_max(&[2.0, 2.0]), [1.0, 1.0]);
        assert_eq!(min_max(&[0.0, 0.0]), [0.0, 0.0]);
    }
}
