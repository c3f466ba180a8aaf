//! The keys and values of every position a generation has read, one pair per block,
//! preallocated in chunks so that reading a token writes in place instead of
//! concatenating.
//!
//! A clone is a cheap checkpoint of a prompt: it shares the storage, and the original
//! only writes positions past the clone's length, which the clone never reads. Reading
//! a shared prompt once and generating several answers from clones of it saves reading
//! the prompt again. [`KvCache::rewind`] forgets the last positions in place (a draft
//! that was checked and refused); [`KvCache::truncated`] copies the first positions into
//! storage of their own.

use candle_core::Tensor;

use crate::error::Result;

/// Positions the cache grows by; it starts this large and never copies more often.
const CHUNK: usize = 1024;

/// Keys and values are `(batch, kv_heads, positions, head_dim)`: positions are axis 2.
const POSITIONS: usize = 2;

/// One block's keys and values.
#[derive(Clone, Default)]
pub(crate) struct BlockCache {
    /// Preallocated storage (keys, values); `None` before the first token.
    storage: Option<(Tensor, Tensor)>,
    /// Positions in use, from the start of the storage.
    len: usize,
}

impl BlockCache {
    /// Writes `k` and `v` after the positions in use and returns every position's.
    pub(crate) fn append(&mut self, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
        let added = k.dim(POSITIONS)?;
        let needed = self.len + added;
        let capacity = self.storage.as_ref().map_or(0, |(k, _)| k.dims()[POSITIONS]);
        if needed > capacity {
            let grown = needed.div_ceil(CHUNK) * CHUNK;
            let allocate = |like: &Tensor| -> Result<Tensor> {
                let mut shape = like.dims().to_vec();
                shape[POSITIONS] = grown;
                let fresh = Tensor::zeros(shape, like.dtype(), like.device())?;
                Ok(fresh)
            };
            let (keys, values) = (allocate(k)?, allocate(v)?);
            if let Some((old_k, old_v)) = &self.storage
                && self.len > 0
            {
                keys.slice_set(&old_k.narrow(POSITIONS, 0, self.len)?.contiguous()?, POSITIONS, 0)?;
                values.slice_set(&old_v.narrow(POSITIONS, 0, self.len)?.contiguous()?, POSITIONS, 0)?;
            }
            self.storage = Some((keys, values));
        }
        let (keys, values) = self.storage.as_mut().expect("allocated above");
        keys.slice_set(k, POSITIONS, self.len)?;
        values.slice_set(v, POSITIONS, self.len)?;
        self.len = needed;
        Ok((
            keys.narrow(POSITIONS, 0, self.len)?,
            values.narrow(POSITIONS, 0, self.len)?,
        ))
    }

    /// A copy of the first `len` positions in storage of its own.
    fn truncated(&self, len: usize) -> Result<Self> {
        let mut copy = Self::default();
        if let (Some((k, v)), true) = (&self.storage, len > 0) {
            copy.append(
                &k.narrow(POSITIONS, 0, len)?.contiguous()?,
                &v.narrow(POSITIONS, 0, len)?.contiguous()?,
            )?;
        }
        Ok(copy)
    }
}

/// The keys and values of every position read so far, one pair per block.
#[derive(Clone)]
pub struct KvCache {
    blocks: Vec<BlockCache>,
}

impl KvCache {
    /// An empty cache for a model of `blocks` blocks.
    pub(crate) fn new(blocks: usize) -> Self {
        Self {
            blocks: vec![BlockCache::default(); blocks],
        }
    }

    /// How many positions the cache holds.
    pub fn len(&self) -> usize {
        self.blocks.first().map_or(0, |block| block.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy holding only the first `len` positions (all of them when `len` is larger),
    /// in storage of its own: writing to either leaves the other as it was.
    pub fn truncated(&self, len: usize) -> Result<Self> {
        let len = len.min(self.len());
        let blocks = self
            .blocks
            .iter()
            .map(|block| block.truncated(len))
            .collect::<Result<_>>()?;
        Ok(Self { blocks })
    }

    /// Forgets every position from `len` on, in place: the next token read takes
    /// position `len`. Clones taken while the cache was at most `len` long are
    /// unaffected (they never read past their own length).
    pub fn rewind(&mut self, len: usize) {
        for block in &mut self.blocks {
            block.len = block.len.min(len);
        }
    }

    /// Block `n`'s keys and values, for the forward pass.
    pub(crate) fn block(&mut self, n: usize) -> &mut BlockCache {
        &mut self.blocks[n]
    }
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor};

    use super::KvCache;

    /// `positions` positions whose every value is its position's index, from `start`.
    fn positions(start: usize, positions: usize) -> Tensor {
        let values: Vec<f32> = (start..start + positions).flat_map(|p| [p as f32; 4]).collect();
        Tensor::from_vec(values, (1, 1, positions, 4), &Device::Cpu).unwrap()
    }

    /// The first value of each position block 0 holds.
    fn keys(cache: &KvCache) -> Vec<f32> {
        let block = &cache.blocks[0];
        let (k, _) = block.storage.as_ref().unwrap();
        k.narrow(2, 0, block.len)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .chunks(4)
            .map(|c| c[0])
            .collect()
    }

    #[test]
    fn a_rewound_cache_writes_over_the_forgotten_positions_and_leaves_clones_alone() {
        let mut cache = KvCache::new(1);
        cache.block(0).append(&positions(0, 3), &positions(0, 3)).unwrap();
        let checkpoint = cache.clone();
        cache.block(0).append(&positions(3, 2), &positions(3, 2)).unwrap();
        assert_eq!(cache.len(), 5);
        cache.rewind(4);
        assert_eq!(cache.len(), 4);
        cache.block(0).append(&positions(40, 1), &positions(40, 1)).unwrap();
        assert_eq!(keys(&cache), vec![0.0, 1.0, 2.0, 3.0, 40.0]);
        assert_eq!(checkpoint.len(), 3);
        assert_eq!(keys(&checkpoint), vec![0.0, 1.0, 2.0]);
    }

    #[test]
    fn the_cache_grows_past_a_chunk_and_keeps_what_it_held() {
        let mut cache = KvCache::new(1);
        cache.block(0).append(&positions(0, 1000), &positions(0, 1000)).unwrap();
        cache
            .block(0)
            .append(&positions(1000, 100), &positions(1000, 100))
            .unwrap();
        let expected: Vec<f32> = (0..1100).map(|p| p as f32).collect();
        assert_eq!(keys(&cache), expected);
        let copy = cache.truncated(10).unwrap();
        assert_eq!(copy.len(), 10);
    }
}
