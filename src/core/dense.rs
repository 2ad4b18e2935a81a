//! Scoring arrays in place: score matrices, ranked id lists, ANN neighbours.
//!
//! No ids, no hashing, no join: row `i` of a `scores` matrix is query `i`, its
//! columns are the candidates, and `labels[i, j]` is candidate `j`'s label.
//! Each row is ranked (score descending), its label vector is built, and every
//! metric reads it through the same kernels as the id path
//! (`eval::score_ranking`), so every family is available.
//!
//! Semantics of a row (documented for users in `python/ranklens/_dense.py`):
//! * every valid cell is a judged candidate with its label: `0` is judged
//!   non-relevant, a negative label trec_eval's "in the pool, unjudged";
//! * ties ([`DenseTies`]): equal scores in column order (the default), the
//!   expected value over their orderings, or the best / worst ordering;
//! * a row with no label relevant at the evaluation's level is *empty*; its
//!   values follow [`Empty`].
//!
//! Matrices are read through [`Matrix`]: a slice, a shape and element strides
//! (what numpy's views have), so transposed and sliced arrays are read without
//! a copy.  Per-thread scratch holds one row; nothing is allocated per cell.
//!
//! Two paths, the same values bit for bit (tested: `dense/tests.rs`,
//! `tests/test_dense.py`).  The sparse path (`dense/sparse.rs`) takes a row
//! when `ties="first"`, no mask, every level above 0 and every metric is one
//! of ndcg, dcg, map, mrr, recall, P, hits, hit_rate, r_precision, num_ret,
//! num_rel: only the cells with a positive label are kept, as (rank, label)
//! pairs.  Every other
//! row goes through the general path below (a ranked label vector and the id
//! path's kernels), which has every family and tie rule.
//!
//! Speed on 100k x 100 float32 scores, 5% int64 labels, 5 metrics, 1 thread
//! (2026-11-25, shared 2-core AMD EPYC VM with AVX2, load average 4.4, LTO
//! builds, CPU time, median of 9 calls, A/B alternated three times; the
//! figures of `evaluate_dense` itself in BENCHMARKS.md): general path 70-71
//! ms; sparse path 19.0-19.1 ms with its AVX2 loops, 25.2-25.6 ms with the
//! portable ones (`RANKLENS_SIMD=portable`), 28.0-28.1 ms before them
//! (cbd9445), against 3.7-4.2 ms for one numpy pass over both matrices:
//! 4.6-5.0x, the target of 3x is not met.  callgrind (LTO, 20k rows):
//! 2,900 instructions a row (AVX2), 4,340 (portable), 3,960 before.  Where
//! the time goes (quick builds, each part cut out in turn): the label and
//! NaN scans and the row's fixed costs 8.7 ms (5.6 ms on a matrix with no
//! positive label), the rank counts 5.1 ms (one pass over the scores a
//! positive cell, 8 lanes), placing the (rank, label) pairs and the ideal
//! 6-7 ms, the five metrics 1.6 ms.  `evaluate_flat` with sorted `indexes`
//! reads each query's run of cells through the same sparse path, by the same
//! blocks of rows (`sparse::Layout::Runs`: offsets per group in place of a
//! fixed row length).
//!
//! What did not pay (sparse path, quick builds, 1 thread, 100k rows):
//! skipping blocks of 8 labels without a positive one (12% fewer
//! instructions, 5-10% more CPU time: the block test's branch mispredicts at
//! 5% labels); the positive labels four at a time, a 4-bit mask and a table
//! of its set positions (29.0 -> 30.8 ms); `usize` counts in the rank count
//! (half the lanes of `u32`); counting the cells before and after a cell in
//! two loops of one compare each rather than one pass with an equality count
//! (22 -> 30 ms with AVX2: the loops' tails); two positive cells a pass over
//! the scores (22.1 -> 22.3 ms); the pairs and the ideal sorted by a sorting
//! network on 8 padded keys in registers (22 -> 25.5 ms, though callgrind
//! counts 5% fewer instructions and a third fewer mispredicts), by insertion
//! sorts (28.3 ms), or placed by counting on 8 padded slots (27 ms);
//! `discount`'s table looked up once per call rather than per term (no
//! change).
//!
//! AVX-512 (`dense/sparse/avx512.rs`; 2026-11-27, the same 2-core AMD EPYC
//! VM, Zen 4 class with AVX-512 F/BW/DQ/VL, shared with two other builds,
//! LTO builds, CPU time of `evaluate_dense(..., threads=1)`, best of 9 calls,
//! numpy pass (CPU time) in the same process, A/B alternated three times
//! with main's wheel, 3ef8cce, load average 4.7-4.8): 15.3-15.7 ms (25e69ed)
//! against 18.8-19.4 ms for the AVX2 loops of the same wheel
//! (`RANKLENS_SIMD=avx2`), 25.2-25.6 ms for its portable ones and 19.05-19.11
//! ms for main's; numpy pass 4.1-4.7 ms: 3.5-3.6x, 20% less than main, the
//! target of 3x (about 12.5 ms) is not met.  `benches/bench_dense.py
//! --repeat 5` (wall, A/B twice, load 4.6-5.7): 1 thread 16.0 and 15.7 ms
//! against 21.1 and 20.0 ms for main's wheel (3.39x a numpy pass of 4.7 ms
//! in the same run); 2 threads not measurable at that load (15.6-21 ms both
//! ways; 8.6 ms against main's 13.9 ms at load 3.6-3.8, c8f6916).  The Rust
//! harness (`cargo test --release --lib dense_timing -- --ignored
//! --nocapture`, thread CPU time, best of 7, load 3.1, c8f6916): portable
//! 24.6, AVX2 19.5, AVX-512 15.3 ms.  Where the time goes (c8f6916,
//! returning early at each step in turn, load 4.1, 18 ms in all): the
//! per-call and per-row fixed costs 2.2 ms (returning at the row's start),
//! the label scan 3.2 ms (its 80 MB read), the NaN scan 0.8 ms, the rank
//! counts 4.4 ms, the sorts in registers 3.3 ms, the five metrics 4.0 ms; a
//! matrix with no positive label takes 5.0 ms (the scans at about the speed
//! of one numpy pass), and the result's pages are not faulted anew (glibc
//! reuses them: no minor fault a call).  What paid, in turn: the positive
//! labels compacted branch-free (`vpcompress` into a register, stored
//! whole: 18.2 -> 16.5 ms); up to 8 positive cells sorted in registers, the
//! pairs by `rank << 32 | index` keys and the ideal descending (Batcher's
//! network of 8, 6 layers of permute, min, max, blend), where the bitmap of
//! ranks and the placing of the ideal branch on every cell (22.7 -> 19.5
//! ms); the rank counts as 8-lane compares subtracted into vectors rather
//! than 16-lane ones into masks (22.1 -> 21.2 ms); rows by blocks of 64, the
//! dtypes matched once (16.5 -> 16.1 ms); two positive cells a pass over the
//! scores, one sum for both (16.1 -> 15.3 ms).
//!
//! What did not pay with AVX-512 (quick LTO builds, 100k rows, CPU time):
//! the rank counts as a popcount of each 16-lane compare mask (8 cycles per
//! 16 cells: the mask moves to general registers are the bottleneck; Zen 4
//! runs a 512-bit operation as two 256-bit halves, so masks into a vector of
//! counts gain nothing over 8 lanes either); four positive cells a pass
//! (15.3 -> 17.3 ms: the padding's wasted counts); the NaN scan folded into
//! the first pass of the rank counts (no change then; as a sum of the scores
//! it pays a little and is kept: `sparse/avx512.rs` `count2`); the ideal sorted before
//! the rank counts, which it does not wait on (15.3 -> 16.9 ms: its 8
//! values kept across the counts); the ideal alone by 19
//! scalar compare-exchanges (as a loop over their pairs: a branch each;
//! written out: 23.5 ms, against 19.5 with the pairs and the ideal in
//! registers); the metrics without branches over the 8 places of a small
//! row (every term computed and masked: 18.0 -> 22.5 ms, its divisions one
//! vector division: 22.2 ms; the counts masked and the sums over the top's
//! prefix: 16.1 -> 20.2 ms); software prefetch of the row 4 ahead, a line at
//! a time (16.1 -> 16.7 ms).  Left: the rank counts (two compares a cell a
//! positive cell), the sorts and the metrics (7 ms: latency chains and the
//! branches of the metric loops, each row's work waiting on the last), the
//! fixed costs.
//!
//! Per row and per call (2026-11-27, the same VM, shared, load average 3.5-6;
//! A/B in one process: the Rust harness's variants alternated, thread CPU
//! time, best of 9, LTO off and one codegen unit, 16.3-16.5 ms for d9ba476's
//! code): an ndcg's ideal only for a row with a positive cell in its top
//! (`sparse::Plan::needs_ideal`), its value 0 without one (15.6 ms for the
//! value alone, 15.4 for the ideal alone, 15.0-15.1 both); a small row's keys
//! inserted into a register rather than stored and reloaded (a wide load of
//! 8 narrow stores waits for them) and its pairs stored by two permutes
//! (`sparse::Pair` is `repr(C)`): 15.55 -> 15.3 ms.  LTO (`dense_timing`,
//! separate runs, load 3.6 and 5): 14.6-14.8 ms against 15.0-15.1 for
//! d9ba476.  `threads=` pools are kept
//! from call to call (`pool::sized_pool`): a pool made per call cost 690
//! page faults (its thread's fresh malloc arena) and the threads' start, a
//! one-row call 118-751 us against 67-84 us.  Both wheels loaded in one
//! process (the native calls on the data, alternated, wall time,
//! best of 25, three runs, load 5.9-6.4; c4580a7 against d9ba476): 1 thread
//! 14.85-14.98 ms against 14.86-14.97 (no change: the gains of the Rust
//! harness do not show in the wheel), 2 threads 7.7 against 7.6 ms, numpy
//! pass 4.0 ms: 3.7x, the target of 3x is not met; `evaluate_flat` (sorted
//! `indexes`) 20.4-20.5 ms against 23.3-23.4 on 1 thread, 10.8-11.0 against
//! 12.2-12.5 on 2 (1.4x the dense path's 2 threads).
//!
//! What did not pay there: the metrics' divisions of small integers looked
//! up in tables (`f / (r + 1)` for counts <= 8 and ranks < 128, integer
//! label / discount: the same quotients, bit for bit) made the row slower,
//! 14.8 -> 16.45 ms (the divisions are off the rows' critical path; the
//! lookups add instructions and cache lines); three positive cells a pass
//! over the scores where two and three make up the count (15.14 -> 15.24
//! ms); the sorted-`indexes` scan of `group_sorted` by 64-cell blocks of
//! bits (branch-free): 10% more samples than the branch a cell.
//!
//! Per-row profile and more that did not pay (2026-11-27, the same VM, idle,
//! wall time, best of 25, `threads=1`, one process a variant, alternated):
//! rows with no positive label cost 6.2 ms in all (the label and NaN scans:
//! 1.45x the numpy pass), one positive 10.75, two 11.1, five at random 15.5,
//! five at fixed columns 15.7 (so branch misses are not what is left: each
//! pass of two positive cells is ~2.2 ms); one metric (`P@10`) instead of
//! five 12.1.  Tried: every positive cell of a row of 3-8 in one pass over
//! the scores (a compare pair per cell each, `N` counts in registers):
//! 15.2 -> 15.9 ms; the label scan keeping only the columns, the labels
//! gathered after it (`vpgatherdq`: 15.45 -> 15.9 ms; scalar loads: 16.5).
//!
//! The AVX-512 row against its profile (2026-11-27, the same VM, idle,
//! wall time, best of 15, `threads=1`, alternated processes; builds of
//! `71b8ca6`, `13e5823` and `f37c64b`, the call and a numpy pass timed in
//! one process): the label scan's loop computed a load mask for every 8
//! labels (30 instructions a chunk; whole chunks by plain loads now, 16)
//! and the `(rank, label)` pairs and the ideal went through sorting
//! networks whose ~50-cycle latency was on every row's path to its metrics
//! (each cell is now placed by a count over a register:
//! `sparse/avx512.rs`): 15.3 -> 14.5 -> 13.6-13.8 ms (two label chunks a
//! step, `f37c64b`: 13.25), numpy pass 3.9-4.4 ms: 3.2-3.5x, above the
//! target of 3x.  Where the rest goes (cut out in turn): a matrix with no
//! positive label 3.7-5.5 ms, one positive a row 9.5, the five metrics of
//! the small rows 2.2 ms of the 13.6.  What did not pay there: the
//! count metrics (recall, P, hits, hit_rate, r_precision, mrr) as popcounts
//! of compares over the row's keys and labels in registers, no loop over
//! the pairs (13.6 either way); the rank counts over 15-bit keys, 16 lanes
//! where float32 scores fill 8 (`min((y - lo) * s, 32767)`, monotone, so a
//! key no other cell has settles the rank; the float32 scores counted
//! otherwise): 13.6 -> 14.2-14.5 ms with a division for `s`, 14.1 with a
//! power of two made from the range's exponent: the row's minimum and
//! maximum, reduced, and the keys' stores put some 40 cycles of latency
//! before the first count, more than the halved compares saved; a small
//! row's pairs, ideal and metrics taken after the next row's scans and
//! counts (software pipelining, two rows' positive cells kept): 13.5-13.7
//! -> 14.3-14.6 ms; the pairs' and the ideal's loops over a fixed 8 lanes
//! (those past the row's cells into a spare slot), without the exit a
//! row's count of positive cells mispredicts: 13.2 either way; the last
//! positive cell of an odd count counted alone (half the compares of
//! `count2` of it twice): 13.1-13.4 -> 13.9-14.1 ms; the NaN scan of the
//! scores folded into the int64 label scan's loop: 13.3-13.6 either way;
//! a small row's passes kept by lanes and summed once for all its cells
//! (one reduction of 8 vectors, the keys made from the sums, no scalar
//! step a cell): 13.2-13.5 -> 13.8-14.0 ms.
//!
//! Tried on `e67a967` (2026-11-27, the same VM; both wheels loaded in
//! one process, their calls alternated, wall time, six processes of 20-40
//! rounds): a small row's metrics without a loop over its pairs (the ranks,
//! labels and ideal kept in registers by masked broadcasts, counts as
//! popcounts of masks, each sum's 8 terms by one vector division and added
//! lane by lane in rank order: bit for bit the shared kernels): medians
//! 0.97-1.015x the time of `e67a967`, mins 13.26-13.70 against 13.53-13.96
//! ms, too little for its 150 lines of unsafe code, not kept.  Through
//! arrays (the pairs stored, then loaded whole; each sum's vector stored,
//! then read lane by lane) it took 21.9 ms: a wide load of narrow stores,
//! and narrow loads of a wide store, wait for the stores.  The labels
//! gathered after the label scan (as above): 13.4 -> 13.7-14.1 ms; each
//! row's cells asked for 4 rows ahead, a line at a time: no change.  The
//! same call slows from 13 to 21-25 ms for several calls in a row, then
//! recovers, in one process on the same buffers whatever their offsets:
//! the host's other work, not the data's placement (`benches/bench_dense.py`
//! times the numpy pass and this call in turn for that reason).
//!
//! Tried on `c409824` (2026-11-28, the same VM; `dense_timing`, thread CPU
//! time, best of 7, variants' binaries alternated; 12.8-12.9 ms on 100k rows,
//! 11.5-11.9 ms with `ROWS=1000` (1000 rows called 100 times, in cache), so the
//! row is compute-bound and its reads cost about 1 ms): the upper bounds, each
//! part cut out with wrong values, were the equal-score compares of the rank
//! counts 0.5 ms, the rank counts 3.5 ms, the five metrics 2.4 ms, and every
//! metric's divisions made multiplications 0.2-0.4 ms.  Not kept: a block's rows
//! in three passes (positive cells and NaN scans of all 64 rows, then every
//! rank count as one flat loop, then the values), so that no row's work waits
//! on its own chain: 12.9 -> 19 ms, 13.3 in cache (the first pass's reads no
//! longer overlap any work, and the passes' own loads and stores); the cells of
//! each row asked for 4 to 16 rows ahead, every line (13.6-14.9 ms), or one
//! line 2 or 4 KiB ahead of each row (13.9, 14.7 ms); the ranks of 3 to 7
//! positive cells by one pass over the scores (their scores sorted in a
//! register, a 3-step binary search of 16 lanes into 8 buckets, 4-bit counts, a
//! tie found as a cell equal to its bucket's bound): 16.7 ms, its chain
//! (gather, sort, search, reductions) some 130 cycles before the first rank
//! where the passes of `count2` run side by side; the positive cells' scores
//! compressed in the label scan (no load of each by its column, no separate NaN
//! scan): 12.7-13.1 -> 13.1-13.4 ms; four values a pass, each chunk of 8 scores
//! in both halves of a 512-bit register: 12.7 -> 14.1 ms (Zen 4 runs each half
//! in turn: the compares are as many, and masked adds replace the
//! subtractions).  Kept: the equal-score compares on bits (`count2`), 1-1.5%;
//! a small row's counts of relevant cells (overall and above a cutoff: map's,
//! recall's, P's, r_precision's) as popcounts over its keys and labels in
//! registers rather than loops over its pairs (`sparse::value`'s `count`):
//! 11.65 -> 11.37 ms in cache, 12.8-13.1 -> 12.6-12.8 on 100k rows, 1-5% in
//! the wheel (both loaded in one process, alternated, mins of 30).  Not
//! kept after it: a small row's ideal DCGs remembered by its counts of
//! integer labels (a 256-entry memo a thread, the key four bits a label
//! value), though placing the ideal and summing its DCG cost 0.85 ms (cut
//! out: 11.2 -> 10.35 ms in cache): 11.2 -> 12.8 ms in cache, 12.6 -> 13.2
//! on 100k rows (the key's conversions and reduction, the memo's loads and
//! the values copied out on every row that needs its ideal).
//!
//! Measured on `a710010` (2026-11-28, the same VM and harness; `POSITIVES=k`
//! gives every row `k` positive labels, `LABELS=` another label dtype): a row
//! without positive cells costs 3.1-3.3 ms a 100k, 1.9 of them reading its
//! int64 labels (0.4 with int8 labels, 1.0 with float32); one positive cell
//! 6.9 ms, each further one about 1.2 ms.  Rows of exactly 5 positive cells
//! are no faster than the binomial ones (12.1 against 11.8 ms): the loops'
//! exits are predicted, mispredictions are not what costs.  The metrics' own
//! share, each cut out: ndcg 1.0 ms, map 0.95, mrr 0.15, recall and P 0.5; all
//! five (with the ideal) 4 ms (11.3 -> 7.3 in cache).  Kept: `sparse::value`
//! reads the discounts' table from the plan and sums the ideal's DCG in a
//! loop, not a fold (the fold was compiled out of line, called from the
//! AVX-512 row with its vector registers saved around the call, and each
//! discount checked the table's lazy initialisation): 11.35-11.45 -> 10.9-11.0
//! ms in cache, 12.45 -> 12.2 on 100k rows.  Not kept (each against 11.3-11.5
//! ms in cache): the positive cells found with AVX-512 VBMI2 (the row's bits
//! in 64-bit words, the columns of up to 8 as bytes by `vpcompressb`, no
//! stores a chunk): 11.3-11.4, and no faster on rows without positive cells,
//! where reading the labels is the cost; the next row's positive cells found
//! before the current row's ranks (two buffers): 12.15; the positive cells of
//! a block's 64 rows found first, then their ranks: 12.6 -> 16.5 ms on 100k
//! rows; the next row's lines asked for into L1 at each row: 12.1, and 13.5 on
//! 100k rows; a small row's counts four cells a pass (two when fewer than
//! three remain) with one transposing sum of all its counts and its keys built
//! as one vector: 11.6; a small row's metrics in 512-bit registers (each
//! metric's terms one 8-lane division, the discounts gathered, the sums in
//! rank order over the lanes): 11.55 with the rank-ordered vectors built by
//! masked broadcasts, 11.9 when loaded back from their scalar stores (a load
//! spanning several stores waits for all of them).  After the discounts' fix
//! (10.9-11.2 ms in cache, 12.4 on 100k rows): the last of an odd number of
//! positive cells counted alone (half its compares): 11.35 and 12.95 ms; the
//! metrics' divisions made multiplications (map's, mrr's, recall's, P's;
//! wrong values): 11.15 -> 11.05 ms, the divider is not what the metrics
//! wait on.  Kept: a count pass's two keys set in a small row's register by
//! one masked 128-bit broadcast when neither cell's score is tied (the
//! counts widened in their vector; two scalar masked broadcasts in a chain
//! before): 11.1 -> 10.8 ms in cache, 12.47 -> 12.24 on 100k rows.  Rows of
//! 9 or more positive cells take the bitmap's way at some 130 cycles more a
//! row (`POSITIVES=8`: 13.7 ms, `9`: 18-19); a small row of up to 16 cells
//! (keys and labels as pairs of registers, the cell's register picked at run
//! time) was slower for every row: 10.8 -> 14.8 ms, the pairs kept on the
//! stack.
//!
//! Rows of 9 to 16 positive cells (`sparse/avx512.rs` `mid_row`; 2026-11-28,
//! the same VM): placed by counts over two registers of keys and two of
//! labels, in a function of their own so that the small row's code is
//! unchanged: 12.03 -> 11.78 ms on 100k rows in `dense_timing`
//! (`POSITIVES=12`: 23.0 -> 19.7 ms), in the wheel 12.34-12.38 ->
//! 12.13-12.29 ms (both builds' native calls in one process, alternated,
//! mins of 40).  The same
//! with the small row's array of ranks widened to 16 for it: rows of 8 cells
//! 13.7 -> 14.3 ms, no gain overall.  Not kept (the wheel measured the same
//! way): the kept labels' bits converted after the scan rather than in it
//! (a load of the compressed stores, converted, stored back): 10.8 -> 11.9
//! ms in cache, the load waiting for the stores it spans; the result written
//! into uninitialised capacity through a per-thread buffer of a block's
//! values, so that the 4 MB result is not zeroed first (`memset`, 1-2% of
//! the call in `perf`): 12.3 -> 13.2 ms; every row's cells asked for 8 rows
//! ahead (`Layout::prefetch`, as for gapped rows): 12.3 -> 14.8 ms.
//! Each count pass done twice (the second's result unused) adds 2.9 ms in
//! cache (10.7 -> 13.6): the counts' work is not hidden by the rows'
//! latency.  Yet halving it did not pay: the rank counts over 16-bit keys,
//! the scores rounded to half precision (`vcvtps2ph`; `-0.0` made `+0.0`,
//! the bits made to order as signed integers, a cell's key shared with no
//! other cell settling its rank, the others counted again on the float32
//! scores; 3.4% of the cells share their key on the data), 16 lanes
//! a 256-bit compare, the keys in registers and a copy in memory for each
//! cell's broadcast, the NaN scan folded into making them: rows of 8
//! positive cells 13.8 -> 13.1 ms, of one 6.45 -> 7.3 (making the keys puts
//! some 15 cycles before a row's first count), the rows 10.65 either
//! way in cache and 11.75 -> 12.7 ms on 100k rows, also when only rows of 5
//! or more positive cells take the keys; with 512-bit registers of 32 keys
//! and counts into masks: 10.8 -> 12.6 ms.  The label scan's compressed
//! columns and labels stored as 256-bit halves (the upper halves only when
//! their lanes are kept), half the store traffic: 11.79 -> 11.75 ms on 100k
//! rows (medians of 6), 10.63 -> 10.59 in cache, within the noise.
//!
//! Measured on `273f3ed` (2026-11-28, the same VM and harness, each part cut
//! out in turn, wrong values; in cache / on 100k rows): the label scan and
//! the row's fixed costs 1.8 / 3.5 ms, the NaN scan 0.5 / 1.4 more, the rank
//! counts 4.7 / 2.9 more, placing a small row's pairs 1.5, its ideal 0.3, the
//! five metrics 1.85 (10.8 / 12.0 in all).  The metrics computed twice add
//! 1.9 ms: their work is not hidden behind other rows'.  Their divisions
//! made multiplications (map's and the ideal DCG's): 0.25 ms less.  One
//! metric alone (in cache): P@10 8.4 ms, recall@10 8.4, mrr 8.5, map 9.1,
//! ndcg@10 9.3; all five 10.6.  Rows of a fixed count of positive cells,
//! weighted as the binomial counts of the rows: 11.2 ms against
//! 10.9 for the binomial rows themselves.  Kept: the NaN scan as a sum of
//! the scores in the first pass of counts (`count2`: about 1%).  Not kept:
//! the equal-score compares replaced by one check a row for ties with a
//! positive cell (the positive cells' score bits in two tables of 32 slots,
//! each score looked up in both by `vpermt2d`, the count of matches equal
//! to the count of positive cells when there is none), so that the passes
//! count the cells above alone: those passes save 1 ms (10.6 -> 9.65 ms in
//! cache), but the check cost 3: building the tables 1.8 ms (by masked
//! broadcasts from general registers, or by scalar stores and wide loads
//! of them), its pass over the scores 1.3; 10.6 -> 12.7-13.1 ms.  Here a
//! `vpermt2d` of 512 bits takes 1.25 cycles and a `vpconflictd` (the other
//! way to find equal scores, 8 cells against 8 scores a register) 2, against
//! two 256-bit compares and subtractions a pair of cells and 8 scores for the
//! equal counts: no lookup of all the cells at once is cheaper.  A small
//! row's array of pairs zeroed by vector stores (`mem::zeroed`) before its
//! scalar stores: 10.6 -> 10.9 ms.
//!
//! Measured on `d0b404c` (2026-11-28, the same VM and harness, load 0.2;
//! in cache / on 100k rows, 10.6 / 11.9 ms in all): the row's fixed costs
//! outside the kernel 0.9 ms (the call's too), the label scan 2.35, the rank
//! counts 3.85, placing a small row's pairs 1.8, its ideal 0.2, ndcg@10 0.8,
//! map 0.95, mrr 0.2, recall and P 0.5.  Twenty multiplications added at the
//! end of each small row cost 0.65 ms whether chained (some 60 cycles of
//! latency) or independent: the end of a row's chain is hidden behind the
//! next row's work.  Not kept: a small row's pairs placed by sorting 32-bit
//! keys `rank << 3 | q` in a 256-bit register (Batcher's 19
//! compare-exchanges in 6 layers; the labels permuted by the sorted keys'
//! low bits, the pairs stored by two permutes), no mask moved to a general
//! register: 10.6-10.7 -> 10.7-10.9 ms in cache; the first line of the next
//! 4 KiB page of each matrix asked for at each row: 11.9 -> 13.4 ms on 100k
//! rows; and again (each as in the notes above, with the same outcome) the
//! labels gathered after the scan (11.55 / 12.9), loaded one by one after
//! it (no change), three cells a pass where three or six remain (no change
//! / 12.3), a small row's passes summed once (11.2 / 12.4), the next row's
//! lines asked for at each row (11.35 / 12.6), the pairs' loop over a fixed
//! 8 lanes (10.8).

use crate::core::error::{Error, Result};
use crate::core::eval::{self, score_ranking, Options, Ties};
use crate::core::metrics::query::{is_rel, PrefixBuf, Query, TieGroups};
use crate::core::metrics::{self, err, Family, MetricSpec};
use rayon::prelude::*;

/// A read-only 2-D view: element `(i, j)` is `data[i * row_stride + j *
/// col_stride]` (strides in elements, not bytes).
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a, T: Copy> Matrix<'a, T> {
    /// Check that every element lies inside `data`.
    pub fn new(
        data: &'a [T],
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self> {
        // A stride along an axis of length <= 1 is never used.
        let row_stride = if rows <= 1 { 0 } else { row_stride };
        let col_stride = if cols <= 1 { 1 } else { col_stride };
        if rows > 0 && cols > 0 {
            let last = (rows - 1)
                .checked_mul(row_stride)
                .zip((cols - 1).checked_mul(col_stride))
                .and_then(|(a, b)| a.checked_add(b));
            if !last.is_some_and(|l| l < data.len()) {
                return Err(Error::InvalidInput(format!(
                    "internal: a {rows} x {cols} view with strides ({row_stride}, \
                     {col_stride}) does not fit its {} elements",
                    data.len()
                )));
            }
        }
        Ok(Matrix {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
        })
    }

    /// A C-contiguous `rows x cols` matrix.
    pub fn contiguous(data: &'a [T], rows: usize, cols: usize) -> Result<Self> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::InvalidInput(format!(
                "internal: {} elements do not make a {rows} x {cols} matrix",
                data.len()
            )));
        }
        Matrix::new(data, rows, cols, cols, 1)
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Element `(i, j)` (in bounds: checked in `new`).
    #[inline]
    fn get(&self, i: usize, j: usize) -> T {
        self.data[i * self.row_stride + j * self.col_stride]
    }

    /// Columns `a..b` of a one-row matrix, as a one-row matrix (`None` when
    /// out of range).
    fn columns(&self, a: usize, b: usize) -> Option<Self> {
        if self.rows != 1 || a > b || b > self.cols {
            return None;
        }
        let data = if a == b {
            &self.data[..0]
        } else {
            self.data.get(a * self.col_stride..)?
        };
        Matrix::new(data, 1, b - a, 0, self.col_stride).ok()
    }

    /// Cells `a..b` of a one-row matrix when they are contiguous.
    fn run(&self, a: usize, b: usize) -> Option<&'a [T]> {
        if self.rows != 1 || a > b || b > self.cols {
            return None;
        }
        if self.col_stride == 1 || b - a <= 1 {
            self.data
                .get(a * self.col_stride..a * self.col_stride + (b - a))
        } else {
            None
        }
    }

    /// The first `k` elements of row `i` when the row is contiguous.
    fn contiguous_row(&self, i: usize, k: usize) -> Option<&'a [T]> {
        let start = i * self.row_stride;
        if self.col_stride == 1 || k <= 1 {
            self.data.get(start..start + k)
        } else {
            None
        }
    }

    /// The first `k` elements of row `i` (`k <= cols`): borrowed when the row
    /// is contiguous, else copied into `buf`.
    fn row_prefix<'b>(&'b self, i: usize, k: usize, buf: &'b mut Vec<T>) -> &'b [T] {
        let start = i * self.row_stride;
        if self.col_stride == 1 || k <= 1 {
            if let Some(row) = self.data.get(start..start + k) {
                return row;
            }
        }
        buf.clear();
        buf.extend((0..k).map(|j| self.get(i, j)));
        buf
    }

    /// Whether the first `k` elements of the rows lie apart, each row
    /// contiguous (a prefix of wider rows): [`Matrix::prefetch_prefix`]
    /// pays only there (where the prefixes follow each other, the hardware
    /// fetches them ahead itself).
    fn gapped_prefixes(&self, k: usize) -> bool {
        self.col_stride == 1 && self.row_stride > k
    }

    /// Ask for the cache lines of the first `k` elements of row `i` (up to
    /// 256 bytes), where the row is contiguous and inside the matrix; a
    /// hint, it changes nothing.
    #[inline]
    fn prefetch_prefix(&self, i: usize, k: usize) {
        if i >= self.rows || self.col_stride != 1 {
            return;
        }
        let start = i * self.row_stride;
        let Some(row) = self.data.get(start..start + k.min(self.cols)) else {
            return;
        };
        let bytes = std::mem::size_of_val(row).min(256);
        let p = row.as_ptr().cast::<u8>();
        for off in (0..bytes).step_by(64).chain(bytes.checked_sub(1)) {
            crate::core::prefetch(p.wrapping_add(off));
        }
    }

    /// Row `i`, converted, into `out` (cleared first).
    fn load(&self, i: usize, out: &mut Vec<f64>, conv: impl Fn(T) -> f64) {
        out.clear();
        if self.cols == 0 {
            return;
        }
        let start = i * self.row_stride;
        if self.col_stride == 1 {
            out.extend(self.data[start..start + self.cols].iter().map(|&x| conv(x)));
        } else if self.col_stride == 0 {
            out.resize(self.cols, conv(self.data[start]));
        } else {
            out.extend(
                self.data[start..]
                    .iter()
                    .step_by(self.col_stride)
                    .take(self.cols)
                    .map(|&x| conv(x)),
            );
        }
    }
}

/// IEEE half precision (bits) to f64, exactly.
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let frac = (h & 0x3ff) as f64;
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        0x1f if frac == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e as i32 - 15),
    }
}

/// bfloat16 (bits: the upper half of an f32) to f64, exactly.
pub fn bf16_to_f64(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

/// A matrix of numbers in one of the dtypes the dense path reads in place.
#[derive(Clone, Copy, Debug)]
pub enum Numbers<'a> {
    F64(Matrix<'a, f64>),
    F32(Matrix<'a, f32>),
    /// IEEE half precision, as its bits.
    F16(Matrix<'a, u16>),
    /// bfloat16, as its bits.
    Bf16(Matrix<'a, u16>),
    I64(Matrix<'a, i64>),
    I32(Matrix<'a, i32>),
    I8(Matrix<'a, i8>),
    /// `uint8` and `bool`.
    U8(Matrix<'a, u8>),
}

/// Owned cells of one of [`Numbers`]' dtypes (flat cells copied into
/// group order: [`Numbers::in_groups`]).
enum Cells {
    F64(Vec<f64>),
    F32(Vec<f32>),
    F16(Vec<u16>),
    Bf16(Vec<u16>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    I8(Vec<i8>),
    U8(Vec<u8>),
}

/// Cell `c` of a one-row matrix at `place[c]` of the result (`None` unless
/// one row of `place.len()` cells, each place below it): written in input
/// order, by parts of the cells on the pool's threads when it has several
/// and the call is large.  Not kept: each place's line asked for 32 or 128
/// cells ahead (10M shuffled cells, 1 thread, 2026-11-28, Intel Xeon with
/// AVX-512: 259 -> 267-275 ms; the stores' misses already overlap).
fn to_places<T: Placed>(m: &Matrix<'_, T>, place: &[i64]) -> Option<Vec<T>> {
    let n = place.len();
    if m.rows != 1 || m.cols != n {
        return None;
    }
    if n <= SORTED_CHUNK || rayon::current_num_threads() == 1 {
        let mut out = vec![T::default(); n];
        for (c, &p) in place.iter().enumerate() {
            *out.get_mut(usize::try_from(p).ok()?)? = m.get(0, c);
        }
        return Some(out);
    }
    // From several threads, each slot an atomic written by a relaxed store
    // (a plain store on x86-64 and aarch64): the places are distinct, and the
    // atomics keep the writes defined even if they were not.
    let out: Vec<T::Slot> = (0..n).into_par_iter().map(|_| T::slot()).collect();
    let ok = place.par_chunks(SORTED_CHUNK).enumerate().all(|(k, part)| {
        part.iter().enumerate().all(|(j, &p)| {
            let slot = usize::try_from(p).ok().and_then(|p| out.get(p));
            slot.map(|s| T::put(s, m.get(0, k * SORTED_CHUNK + j)))
                .is_some()
        })
    });
    ok.then(|| T::take_all(out))
}

/// A cell type [`to_places`] writes from several threads.
trait Placed: Copy + Default + Send + Sync {
    /// The atomic of the same size.
    type Slot: Send + Sync;
    fn slot() -> Self::Slot;
    fn put(slot: &Self::Slot, value: Self);
    /// The values of the slots, in their allocation.
    fn take_all(slots: Vec<Self::Slot>) -> Vec<Self>;
}

macro_rules! placed {
    ($($t:ty => $atomic:ty, $to:expr, $from:expr;)*) => {$(
        impl Placed for $t {
            type Slot = $atomic;
            fn slot() -> $atomic {
                <$atomic>::new(0)
            }
            fn put(slot: &$atomic, value: $t) {
                slot.store($to(value), std::sync::atomic::Ordering::Relaxed)
            }
            fn take_all(slots: Vec<$atomic>) -> Vec<$t> {
                if size_of::<$atomic>() != size_of::<$t>() || align_of::<$atomic>() != align_of::<$t>() {
                    return slots.into_iter().map(|s| $from(s.into_inner())).collect();
                }
                let mut slots = std::mem::ManuallyDrop::new(slots);
                let (ptr, len, cap) = (slots.as_mut_ptr(), slots.len(), slots.capacity());
                // SAFETY: the atomic has the size and bit validity of its
                // integer (documented), and here the size and alignment of
                // `$t` (checked above), whose every bit pattern is a value:
                // the allocation holds `len` initialised values of `$t` and
                // is freed with the same layout.  No thread holds a slot
                // (they were joined), and `slots` is not dropped.
                unsafe { Vec::from_raw_parts(ptr.cast::<$t>(), len, cap) }
            }
        }
    )*};
}

placed! {
    f64 => std::sync::atomic::AtomicU64, f64::to_bits, f64::from_bits;
    f32 => std::sync::atomic::AtomicU32, f32::to_bits, f32::from_bits;
    u16 => std::sync::atomic::AtomicU16, u16::from, u16::from;
    i64 => std::sync::atomic::AtomicI64, i64::from, i64::from;
    i32 => std::sync::atomic::AtomicI32, i32::from, i32::from;
    i8 => std::sync::atomic::AtomicI8, i8::from, i8::from;
    u8 => std::sync::atomic::AtomicU8, u8::from, u8::from;
}

impl Cells {
    /// The cells as a contiguous one-row matrix.
    fn view(&self) -> Numbers<'_> {
        fn one<T: Copy>(v: &[T]) -> Matrix<'_, T> {
            Matrix {
                data: v,
                rows: 1,
                cols: v.len(),
                row_stride: 0,
                col_stride: 1,
            }
        }
        match self {
            Cells::F64(v) => Numbers::F64(one(v)),
            Cells::F32(v) => Numbers::F32(one(v)),
            Cells::F16(v) => Numbers::F16(one(v)),
            Cells::Bf16(v) => Numbers::Bf16(one(v)),
            Cells::I64(v) => Numbers::I64(one(v)),
            Cells::I32(v) => Numbers::I32(one(v)),
            Cells::I8(v) => Numbers::I8(one(v)),
            Cells::U8(v) => Numbers::U8(one(v)),
        }
    }
}

impl<'a> Numbers<'a> {
    /// [`Matrix::prefetch_prefix`] of the matrix.
    #[inline]
    fn prefetch_prefix(&self, i: usize, k: usize) {
        match self {
            Numbers::F64(m) => m.prefetch_prefix(i, k),
            Numbers::F32(m) => m.prefetch_prefix(i, k),
            Numbers::F16(m) | Numbers::Bf16(m) => m.prefetch_prefix(i, k),
            Numbers::I64(m) => m.prefetch_prefix(i, k),
            Numbers::I32(m) => m.prefetch_prefix(i, k),
            Numbers::I8(m) => m.prefetch_prefix(i, k),
            Numbers::U8(m) => m.prefetch_prefix(i, k),
        }
    }

    /// [`Matrix::gapped_prefixes`] of the matrix.
    fn gapped_prefixes(&self, k: usize) -> bool {
        match self {
            Numbers::F64(m) => m.gapped_prefixes(k),
            Numbers::F32(m) => m.gapped_prefixes(k),
            Numbers::F16(m) | Numbers::Bf16(m) => m.gapped_prefixes(k),
            Numbers::I64(m) => m.gapped_prefixes(k),
            Numbers::I32(m) => m.gapped_prefixes(k),
            Numbers::I8(m) => m.gapped_prefixes(k),
            Numbers::U8(m) => m.gapped_prefixes(k),
        }
    }

    /// Columns `a..b` of a one-row matrix ([`Matrix::columns`]).
    fn columns(&self, a: usize, b: usize) -> Option<Numbers<'a>> {
        Some(match self {
            Numbers::F64(m) => Numbers::F64(m.columns(a, b)?),
            Numbers::F32(m) => Numbers::F32(m.columns(a, b)?),
            Numbers::F16(m) => Numbers::F16(m.columns(a, b)?),
            Numbers::Bf16(m) => Numbers::Bf16(m.columns(a, b)?),
            Numbers::I64(m) => Numbers::I64(m.columns(a, b)?),
            Numbers::I32(m) => Numbers::I32(m.columns(a, b)?),
            Numbers::I8(m) => Numbers::I8(m.columns(a, b)?),
            Numbers::U8(m) => Numbers::U8(m.columns(a, b)?),
        })
    }

    /// The cells of a one-row matrix in group order: cell `c` at
    /// `place[c]` (`None` unless one row of `place.len()` cells, each place
    /// below it).  A copy: as many bytes as the cells.
    fn in_groups(&self, place: &[i64]) -> Option<Cells> {
        Some(match self {
            Numbers::F64(m) => Cells::F64(to_places(m, place)?),
            Numbers::F32(m) => Cells::F32(to_places(m, place)?),
            Numbers::F16(m) => Cells::F16(to_places(m, place)?),
            Numbers::Bf16(m) => Cells::Bf16(to_places(m, place)?),
            Numbers::I64(m) => Cells::I64(to_places(m, place)?),
            Numbers::I32(m) => Cells::I32(to_places(m, place)?),
            Numbers::I8(m) => Cells::I8(to_places(m, place)?),
            Numbers::U8(m) => Cells::U8(to_places(m, place)?),
        })
    }

    pub fn shape(&self) -> (usize, usize) {
        match self {
            Numbers::F64(m) => (m.rows, m.cols),
            Numbers::F32(m) => (m.rows, m.cols),
            Numbers::F16(m) | Numbers::Bf16(m) => (m.rows, m.cols),
            Numbers::I64(m) => (m.rows, m.cols),
            Numbers::I32(m) => (m.rows, m.cols),
            Numbers::I8(m) => (m.rows, m.cols),
            Numbers::U8(m) => (m.rows, m.cols),
        }
    }

    /// Cells `(0, j)` for `j` in `cells`, as f64, into `out` (as `load`).
    fn load_cells(&self, cells: impl Iterator<Item = usize>, out: &mut Vec<f64>) {
        out.clear();
        match self {
            Numbers::F64(m) => out.extend(cells.map(|j| m.get(0, j) + 0.0)),
            Numbers::F32(m) => out.extend(cells.map(|j| m.get(0, j) as f64 + 0.0)),
            Numbers::F16(m) => out.extend(cells.map(|j| f16_to_f64(m.get(0, j)) + 0.0)),
            Numbers::Bf16(m) => out.extend(cells.map(|j| bf16_to_f64(m.get(0, j)) + 0.0)),
            Numbers::I64(m) => out.extend(cells.map(|j| m.get(0, j) as f64)),
            Numbers::I32(m) => out.extend(cells.map(|j| m.get(0, j) as f64)),
            Numbers::I8(m) => out.extend(cells.map(|j| m.get(0, j) as f64)),
            Numbers::U8(m) => out.extend(cells.map(|j| m.get(0, j) as f64)),
        }
    }

    /// Row `i` as f64 into `out`.  `-0.0` becomes `0.0` (`x + 0.0`), so that
    /// the two tie, as they compare equal.
    fn load(&self, i: usize, out: &mut Vec<f64>) {
        match self {
            Numbers::F64(m) => m.load(i, out, |x| x + 0.0),
            Numbers::F32(m) => m.load(i, out, |x| x as f64 + 0.0),
            Numbers::F16(m) => m.load(i, out, |x| f16_to_f64(x) + 0.0),
            Numbers::Bf16(m) => m.load(i, out, |x| bf16_to_f64(x) + 0.0),
            Numbers::I64(m) => m.load(i, out, |x| x as f64),
            Numbers::I32(m) => m.load(i, out, |x| x as f64),
            Numbers::I8(m) => m.load(i, out, |x| x as f64),
            Numbers::U8(m) => m.load(i, out, |x| x as f64),
        }
    }
}

/// Which cells of a row are candidates.
#[derive(Clone, Copy, Debug)]
pub enum Valid<'a> {
    All,
    /// Row `i` holds its first `lengths[i]` columns.
    Lengths(&'a [i64]),
    /// A cell is a candidate where the mask is non-zero.
    Mask(Matrix<'a, u8>),
}

impl Valid<'_> {
    /// The columns row `i` of `cols` holds from its start: its length (0 past
    /// the lengths given, at most `cols`), else every column (a mask is read
    /// cell by cell).
    #[inline]
    pub(crate) fn row_len(&self, i: usize, cols: usize) -> usize {
        match self {
            Valid::Lengths(len) => (len.get(i).copied().unwrap_or(0).max(0) as usize).min(cols),
            _ => cols,
        }
    }
}

/// How tied scores are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DenseTies {
    /// Column order: the lower column index ranks first.
    First,
    /// The expected value over the orderings of each group of equal scores
    /// (`metrics/expected.rs`).
    Expected,
    /// Higher labels first within a group of equal scores (then column order):
    /// the best value over the orderings for every metric that rewards
    /// ranking higher labels higher.
    Best,
    /// Lower labels first within a group of equal scores (then column order).
    Worst,
}

impl DenseTies {
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "first" => DenseTies::First,
            "expected" => DenseTies::Expected,
            "best" => DenseTies::Best,
            "worst" => DenseTies::Worst,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "ties must be 'first', 'expected', 'best' or 'worst', got {name:?}"
                )))
            }
        })
    }
}

/// The value of every metric on a row with no relevant label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Empty {
    Zero,
    One,
    /// NaN.
    Nan,
    /// NaN here; the caller drops the row (the empty flags say which).
    Skip,
}

impl Empty {
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "zero" => Empty::Zero,
            "one" => Empty::One,
            "nan" => Empty::Nan,
            "skip" => Empty::Skip,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "empty must be 'zero', 'nan', 'skip' or 'one', got {name:?}"
                )))
            }
        })
    }

    fn value(self) -> f64 {
        match self {
            Empty::Zero => 0.0,
            Empty::One => 1.0,
            Empty::Nan | Empty::Skip => f64::NAN,
        }
    }
}

/// What [`evaluate_dense`] and [`evaluate_topk`] return.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseEvaluation {
    /// Row-major `rows x metrics`.
    pub values: Vec<f64>,
    /// Whether each row had no relevant label (its values follow `Empty`).
    pub empty: Vec<bool>,
}

/// Per-thread scratch: one row.
#[derive(Default)]
struct Scratch {
    scores: Vec<f64>,
    /// A strided row of float32 scores (`f32_row`).
    scores32: Vec<f32>,
    labels: Vec<f64>,
    mask: Vec<f64>,
    /// The column of each kept cell when a mask drops some.
    cols: Vec<u32>,
    order: Vec<u32>,
    ranked: Vec<f64>,
    ideal: Vec<f64>,
    bounds: Vec<usize>,
    prefix: PrefixBuf,
    ids: Vec<i64>,
    rel: Vec<i64>,
    /// `(rank, label)` of the positive cells (`sparse`).
    pairs: Vec<sparse::Pair>,
    /// The ranks of the positive cells, a bit each, all clear between rows
    /// (`sparse`, AVX-512).
    bitmap: Vec<u64>,
    /// The label at each rank of `bitmap`'s set bits (`sparse`, AVX-512).
    slots: Vec<f64>,
}

/// Build the shared running sums from this many metrics on.
const PREFIX_FROM: usize = 12;

/// Rank cells by counting, rather than sorting, when at most this many per
/// `log2(n)` have a non-zero label: each such cell's rank is the number of
/// cells above it, an `n`-long branch-free count.  Why: with the few relevant
/// labels of retrieval data (5 in 100) this is 4x faster than sorting the row,
/// and the zero-label cells need no order among themselves (they are
/// interchangeable for every metric).
const COUNT_PER_LOG2: usize = 4;

/// Score every row of `scores` against the same row of `labels` on every
/// metric (see the module doc for the semantics).
pub fn evaluate_dense(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    valid: &Valid<'_>,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
) -> Result<DenseEvaluation> {
    dense_path(scores, labels, valid, metrics, level, ties, empty, false)
}

/// [`evaluate_dense`]; `general`: every row through the general path, never
/// the sparse one (the tests compare the two).
#[allow(clippy::too_many_arguments)]
fn dense_path(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    valid: &Valid<'_>,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
    general: bool,
) -> Result<DenseEvaluation> {
    let (rows, cols) = scores.shape();
    if labels.shape() != (rows, cols) {
        return Err(Error::InvalidInput(format!(
            "labels has shape {:?}, scores {:?}: they must match",
            labels.shape(),
            (rows, cols)
        )));
    }
    check_valid(valid, rows, cols)?;
    let metrics = setup(metrics, level, ties, || max_label(labels, valid, rows))?;
    let fast = if general {
        None
    } else {
        sparse::plan(&metrics, level, ties, valid)
    };
    let general = |s: &mut Scratch, i: usize, out: &mut [f64]| {
        if let (Numbers::F32(m), DenseTies::First, false) =
            (scores, ties, matches!(valid, Valid::Mask(_)))
        {
            return f32_row(s, m, labels, valid, i, &metrics, level, empty, out);
        }
        scores.load(i, &mut s.scores);
        labels.load(i, &mut s.labels);
        keep_valid(s, valid, i);
        check_row(&s.scores, &s.labels, matrix_cell(i, &s.cols))?;
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        rank_row(s, ties);
        score_row(s, &metrics, level, ties, out);
        Ok(false)
    };
    let layout = sparse::Layout::Matrix(valid);
    let sparse = (scores, labels, &layout, level, empty);
    run_sparse(rows, metrics.len(), fast.as_ref(), sparse, general)
}

/// `rows` rows (or groups) of `nm` metrics: by blocks of rows through the
/// sparse kernels of `fast` where there is a plan, each row they leave by
/// `general`; else every row by `general`.
fn run_sparse(
    rows: usize,
    nm: usize,
    fast: Option<&sparse::Plan>,
    (scores, labels, layout, level, empty): (
        &Numbers<'_>,
        &Numbers<'_>,
        &sparse::Layout<'_>,
        f64,
        Empty,
    ),
    general: impl Fn(&mut Scratch, usize, &mut [f64]) -> Result<bool> + Sync,
) -> Result<DenseEvaluation> {
    match fast {
        Some(fast) if nm > 0 => run_blocks(rows, nm, |s, i0, out, flags| {
            let done = sparse::rows(
                s, scores, labels, layout, i0, fast, level, empty, out, flags,
            );
            for (r, (o, f)) in out.chunks_mut(nm).zip(flags.iter_mut()).enumerate() {
                if done >> r & 1 == 0 {
                    *f = general(s, i0 + r, o)?;
                }
            }
            Ok(())
        }),
        _ => run_rows(rows, nm, general),
    }
}

/// Row `i` of float32 scores, `DenseTies::First`, no mask: the scores are
/// compared as float32, where they lie when the row is contiguous, and
/// widened only when the row is sorted.  Why: counting on float32 compares
/// twice as many cells an instruction, and most rows skip the widening: 3-11%
/// less CPU time on 100k x 100 rows with 5% labels (A/B, release builds).  Same
/// ranks, so the same values, bit for bit: float32 to float64 is exact and
/// keeps every comparison.
#[allow(clippy::too_many_arguments)]
fn f32_row(
    s: &mut Scratch,
    m: &Matrix<'_, f32>,
    labels: &Numbers<'_>,
    valid: &Valid<'_>,
    i: usize,
    metrics: &[MetricSpec],
    level: f64,
    empty: Empty,
    out: &mut [f64],
) -> Result<bool> {
    let mut buf = std::mem::take(&mut s.scores32);
    let full = m.row_prefix(i, m.cols, &mut buf);
    let n = valid.row_len(i, full.len());
    let row = full.get(..n).unwrap_or(full);
    labels.load(i, &mut s.labels);
    s.labels.truncate(row.len());
    s.cols.clear();
    let result = (|| {
        check_row(row, &s.labels, matrix_cell(i, &[]))?;
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        if counts(&s.labels, DenseTies::First) {
            count_ranks(row, &s.labels, &mut s.ranked, &mut s.bounds);
        } else {
            s.scores.clear();
            s.scores.extend(row.iter().map(|&x| x as f64 + 0.0));
            rank_by_sorting(s, DenseTies::First);
        }
        score_row(s, metrics, level, DenseTies::First, out);
        Ok(false)
    })();
    s.scores32 = buf;
    result
}

/// Drop the cells of row `i` that are not candidates from `s.scores` and
/// `s.labels`, keeping their order; `s.cols` gets the columns kept (empty
/// when all are).
fn keep_valid(s: &mut Scratch, valid: &Valid<'_>, i: usize) {
    s.cols.clear();
    match valid {
        Valid::All => {}
        Valid::Lengths(len) => {
            let n = (len[i].max(0) as usize).min(s.scores.len());
            s.scores.truncate(n);
            s.labels.truncate(n);
        }
        Valid::Mask(m) => {
            m.load(i, &mut s.mask, |x| x as f64);
            for j in 0..s.mask.len() {
                if s.mask[j] != 0.0 {
                    s.scores[s.cols.len()] = s.scores[j];
                    s.labels[s.cols.len()] = s.labels[j];
                    s.cols.push(j as u32);
                }
            }
            s.scores.truncate(s.cols.len());
            s.labels.truncate(s.cols.len());
            if s.cols.len() == s.mask.len() {
                s.cols.clear();
            }
        }
    }
}

/// The metrics, checked and resolved (err's automatic `gmax`: the largest
/// label of the whole input, as the id path takes the largest of the qrels).
fn setup(
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    max_label: impl FnOnce() -> f64,
) -> Result<Vec<MetricSpec>> {
    let mut opts = Options::new(level);
    if ties == DenseTies::Expected {
        opts.ties = Ties::Expected;
    }
    eval::check(metrics, &opts)?;
    // The scan for the largest label only when an err@k takes it.
    let auto = |m: &MetricSpec| m.family == Family::Err && m.param("gmax") <= 0.0;
    let max = if metrics.iter().any(auto) {
        max_label()
    } else {
        0.0
    };
    Ok(metrics::resolve_gmax(metrics, max))
}

/// The largest label of the candidates (0 at least).
fn max_label(labels: &Numbers<'_>, valid: &Valid<'_>, rows: usize) -> f64 {
    let mut s = Scratch::default();
    (0..rows).fold(0.0, |acc, i| {
        labels.load(i, &mut s.labels);
        s.scores.clear();
        s.scores.resize(s.labels.len(), 0.0);
        keep_valid(&mut s, valid, i);
        acc.max(err::max_label(&s.labels))
    })
}

fn check_valid(valid: &Valid<'_>, rows: usize, cols: usize) -> Result<()> {
    match valid {
        Valid::All => Ok(()),
        Valid::Lengths(len) if len.len() != rows => Err(Error::InvalidInput(format!(
            "lengths has {} entries for {rows} rows",
            len.len()
        ))),
        Valid::Lengths(len) => match len.iter().position(|&l| l < 0 || l as usize > cols) {
            Some(i) => Err(Error::InvalidInput(format!(
                "lengths[{i}] = {} is outside 0..={cols}",
                len[i]
            ))),
            None => Ok(()),
        },
        Valid::Mask(m) if (m.rows, m.cols) != (rows, cols) => Err(Error::InvalidInput(format!(
            "mask has shape {:?}, scores {:?}: they must match",
            (m.rows, m.cols),
            (rows, cols)
        ))),
        Valid::Mask(_) => Ok(()),
    }
}

/// NaN scores and NaN or infinite labels are errors naming the cell:
/// `cell(j)` is the index of the row's `j`-th kept cell as users write it.
fn check_row<T: Copy + PartialEq>(
    scores: &[T],
    labels: &[f64],
    cell: impl Fn(usize) -> String,
) -> Result<()> {
    // Branch-free scans first (they vectorise); positions only on failure.
    // `x != x`: NaN, in any float type.
    #[allow(clippy::eq_op)]
    let nan = scores.iter().fold(false, |a, &x| a | (x != x));
    if !nan && !labels.iter().fold(false, |a, l| a | !l.is_finite()) {
        return Ok(());
    }
    #[allow(clippy::eq_op)]
    if let Some(j) = scores.iter().position(|&x| x != x) {
        return Err(Error::InvalidInput(format!(
            "scores{} is NaN (pass mask= to leave cells out)",
            cell(j)
        )));
    }
    if let Some(j) = labels.iter().position(|l| !l.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "labels{} is {} (labels must be finite; pass mask= to leave cells out)",
            cell(j),
            labels[j]
        )));
    }
    Ok(())
}

/// `[i, j]`: cell `j` of row `i`, `cols` holding the column of each kept
/// cell (empty when all are kept).
fn matrix_cell(i: usize, cols: &[u32]) -> impl Fn(usize) -> String + '_ {
    move |j| format!("[{i}, {}]", cols.get(j).map_or(j, |&c| c as usize))
}

/// Rows one task of the loops over rows holds (`run_rows`, `run_blocks`):
/// a call of at most this many rows runs them in order on the calling thread,
/// without rayon (so a binding may call it without the pool:
/// `eval::with_threads_or_inline`).
pub const TASK_ROWS: usize = sparse::BLOCK;

/// The parallel loop over rows: `row(scratch, i, out)` writes row `i`'s
/// values and says whether it was empty.  Tasks of [`TASK_ROWS`] rows at
/// least; one task's rows in order on this thread.
fn run_rows(
    rows: usize,
    nm: usize,
    row: impl Fn(&mut Scratch, usize, &mut [f64]) -> Result<bool> + Sync,
) -> Result<DenseEvaluation> {
    let mut values = vec![0.0; rows * nm];
    let mut flags = vec![false; rows];
    if rows <= TASK_ROWS {
        let mut s = Scratch::default();
        for (i, (out, flag)) in values.chunks_mut(nm.max(1)).zip(&mut flags).enumerate() {
            *flag = row(&mut s, i, out)?;
        }
    } else {
        values
            .par_chunks_mut(nm)
            .zip(flags.par_iter_mut())
            .enumerate()
            .with_min_len(TASK_ROWS)
            .try_for_each_init(Scratch::default, |s, (i, (out, flag))| {
                *flag = row(s, i, out)?;
                Ok::<(), Error>(())
            })?;
    }
    Ok(DenseEvaluation {
        values,
        empty: flags,
    })
}

/// [`run_rows`] by blocks of [`sparse::BLOCK`] rows (`nm > 0`):
/// `block(scratch, i0, out, flags)` writes the values and empty flags of rows
/// `i0..i0 + flags.len()`.
fn run_blocks(
    rows: usize,
    nm: usize,
    block: impl Fn(&mut Scratch, usize, &mut [f64], &mut [bool]) -> Result<()> + Sync,
) -> Result<DenseEvaluation> {
    let mut values = vec![0.0; rows * nm];
    let mut flags = vec![false; rows];
    let b = sparse::BLOCK;
    if rows <= TASK_ROWS {
        block(&mut Scratch::default(), 0, &mut values, &mut flags)?;
    } else {
        values
            .par_chunks_mut((b * nm).max(1))
            .zip(flags.par_chunks_mut(b))
            .enumerate()
            .try_for_each_init(Scratch::default, |s, (c, (out, fl))| {
                block(s, c * b, out, fl)
            })?;
    }
    Ok(DenseEvaluation {
        values,
        empty: flags,
    })
}

/// Fill `s.ranked` (labels in rank order) and, for `Expected`, `s.bounds`
/// (the tie groups) from `s.scores` and `s.labels`.
fn rank_row(s: &mut Scratch, ties: DenseTies) {
    if counts(&s.labels, ties) {
        count_ranks(&s.scores, &s.labels, &mut s.ranked, &mut s.bounds);
    } else {
        rank_by_sorting(s, ties);
    }
}

/// Whether a row with these labels is ranked by counting ([`COUNT_PER_LOG2`]).
fn counts(labels: &[f64], ties: DenseTies) -> bool {
    let n = labels.len();
    let nonzero: usize = labels.iter().map(|&l| usize::from(l != 0.0)).sum();
    let log2n = usize::BITS as usize - n.leading_zeros() as usize;
    ties == DenseTies::First && nonzero <= COUNT_PER_LOG2 * log2n
}

/// `DenseTies::First` by counting: the rank of a cell with a non-zero label
/// is the number of cells with a higher score, or an equal score and a lower
/// column; the other ranks hold label 0.
fn count_ranks<T: Copy + PartialOrd>(
    sc: &[T],
    labels: &[f64],
    ranked: &mut Vec<f64>,
    bounds: &mut Vec<usize>,
) {
    ranked.clear();
    bounds.clear();
    ranked.resize(sc.len(), 0.0);
    for (j, &l) in labels.iter().enumerate() {
        if l == 0.0 {
            continue;
        }
        let x = sc[j];
        let above = sc[..j].iter().filter(|&&y| y >= x).count()
            + sc[j + 1..].iter().filter(|&&y| y > x).count();
        ranked[above] = l;
    }
}

fn rank_by_sorting(s: &mut Scratch, ties: DenseTies) {
    let n = s.scores.len();
    s.ranked.clear();
    s.bounds.clear();
    s.order.clear();
    s.order.extend(0..n as u32);
    let (sc, lb) = (&s.scores, &s.labels);
    let by_score = |a: &u32, b: &u32| sc[*b as usize].total_cmp(&sc[*a as usize]);
    match ties {
        DenseTies::First | DenseTies::Expected => s
            .order
            .sort_unstable_by(|a, b| by_score(a, b).then(a.cmp(b))),
        DenseTies::Best => s.order.sort_unstable_by(|a, b| {
            by_score(a, b)
                .then(lb[*b as usize].total_cmp(&lb[*a as usize]))
                .then(a.cmp(b))
        }),
        DenseTies::Worst => s.order.sort_unstable_by(|a, b| {
            by_score(a, b)
                .then(lb[*a as usize].total_cmp(&lb[*b as usize]))
                .then(a.cmp(b))
        }),
    }
    s.ranked.extend(s.order.iter().map(|&j| lb[j as usize]));
    if ties == DenseTies::Expected {
        for (p, &j) in s.order.iter().enumerate() {
            if p == 0 || sc[j as usize] != sc[s.order[p - 1] as usize] {
                s.bounds.push(p);
            }
        }
        if s.bounds.len() == n {
            // No tie: the fixed order is the only one.
            s.bounds.clear();
        } else {
            s.bounds.push(n);
        }
    }
}

/// Whether the row has no relevant label: then `out` is filled by `empty`.
fn empty_row(labels: &[f64], level: f64, empty: Empty, out: &mut [f64]) -> bool {
    if labels.iter().fold(false, |a, &l| a | is_rel(l, level)) {
        return false;
    }
    out.fill(empty.value());
    true
}

/// Every metric on the ranked row into `out`.
fn score_row(
    s: &mut Scratch,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    out: &mut [f64],
) {
    s.ideal.clear();
    s.ideal
        .extend(s.labels.iter().copied().filter(|&l| l > 0.0));
    s.ideal.sort_unstable_by(|a, b| b.total_cmp(a));
    let q = Query {
        ranked: &s.ranked,
        judged: &s.labels,
        ideal: &s.ideal,
        ties: if ties == DenseTies::Expected && !s.bounds.is_empty() {
            TieGroups {
                labels: &s.ranked,
                bounds: &s.bounds,
            }
        } else {
            TieGroups::default()
        },
        prefix: None,
        subtopics: Default::default(),
    };
    // The shared running sums pay off from about a dozen metrics: below,
    // each kernel scanning its own top k is faster (same values, bit for bit:
    // `metrics::prefix_tests`).
    let prefix = (metrics.len() >= PREFIX_FROM).then_some(&mut s.prefix);
    score_ranking(prefix, q, metrics, level, out);
}

/// Ranked ids and what is relevant to each row, for [`evaluate_topk`].
#[derive(Clone, Copy, Debug)]
pub enum Relevant<'a> {
    /// The relevant ids of each row (any order), padded with negative ids.
    Ids(Matrix<'a, i64>),
    /// The label of each retrieved id, aligned with `ids`.
    Labels(Numbers<'a>),
}

/// Score ranked id lists: row `i` of `ids` is query `i`'s ranking, best
/// first; negative ids are padding (left out, ranks closing up).  With
/// `Relevant::Ids` a retrieved id in the row's relevant ids has label 1 and
/// any other is not judged (trec_eval: a document missing from the qrels),
/// and R is the number of distinct relevant ids; with `Relevant::Labels` each
/// retrieved id has the aligned label and the judged pool is the retrieved
/// ids (R counts the relevant ones among them).  A non-negative id twice in
/// one row is an error.
pub fn evaluate_topk(
    ids: &Matrix<'_, i64>,
    relevant: &Relevant<'_>,
    metrics: &[MetricSpec],
    level: f64,
    empty: Empty,
) -> Result<DenseEvaluation> {
    let rows = ids.rows;
    match relevant {
        Relevant::Ids(r) if r.rows != rows => {
            return Err(Error::InvalidInput(format!(
                "relevant has {} rows, ids {rows}: they must match",
                r.rows
            )))
        }
        Relevant::Labels(l) if l.shape() != (rows, ids.cols) => {
            return Err(Error::InvalidInput(format!(
                "relevant labels have shape {:?}, ids {:?}: they must match",
                l.shape(),
                (rows, ids.cols)
            )))
        }
        _ => {}
    }
    let max = || match relevant {
        Relevant::Ids(_) => 1.0,
        Relevant::Labels(l) => {
            // The padding's labels are not candidates: left out.
            let mut s = Scratch::default();
            (0..rows).fold(0.0, |acc, i| {
                l.load(i, &mut s.labels);
                let kept = (0..ids.cols).filter(|&j| ids.get(i, j) >= 0);
                kept.fold(acc, |a: f64, j| a.max(s.labels[j]))
            })
        }
    };
    let metrics = setup(metrics, level, DenseTies::First, max)?;
    run_rows(rows, metrics.len(), |s, i, out| {
        s.ids.clear();
        s.ids.extend((0..ids.cols).map(|j| ids.get(i, j)));
        check_distinct(i, &s.ids, &mut s.rel)?;
        s.ranked.clear();
        s.bounds.clear();
        match relevant {
            Relevant::Ids(r) => {
                s.rel.clear();
                s.rel
                    .extend((0..r.cols).map(|j| r.get(i, j)).filter(|&x| x >= 0));
                s.rel.sort_unstable();
                s.rel.dedup();
                s.ranked.extend(s.ids.iter().filter(|&&d| d >= 0).map(|d| {
                    if s.rel.binary_search(d).is_ok() {
                        1.0
                    } else {
                        f64::NAN
                    }
                }));
                s.labels.clear();
                s.labels.resize(s.rel.len(), 1.0);
            }
            Relevant::Labels(l) => {
                l.load(i, &mut s.labels);
                if let Some(j) = s.labels.iter().position(|l| !l.is_finite()) {
                    return Err(Error::InvalidInput(format!(
                        "relevant[{i}, {j}] is {}: labels must be finite",
                        s.labels[j]
                    )));
                }
                let mut w = 0;
                for j in 0..s.ids.len() {
                    if s.ids[j] >= 0 {
                        s.labels[w] = s.labels[j];
                        w += 1;
                    }
                }
                s.labels.truncate(w);
                s.ranked.extend_from_slice(&s.labels);
            }
        }
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        score_row(s, &metrics, level, DenseTies::First, out);
        Ok(false)
    })
}

/// A non-negative id listed twice in row `i` is an error.
fn check_distinct(i: usize, ids: &[i64], buf: &mut Vec<i64>) -> Result<()> {
    buf.clear();
    buf.extend(ids.iter().copied().filter(|&d| d >= 0));
    buf.sort_unstable();
    match buf.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(Error::InvalidInput(format!(
            "ids row {i}: id {} is listed more than once",
            w[0]
        ))),
        None => Ok(()),
    }
}

/// Flat cells grouped by query (torchmetrics' `(preds, target, indexes)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatGroups {
    /// Group `g` is places `offsets[g]..offsets[g + 1]` of the cells in group
    /// order (input order within a group).
    pub offsets: Vec<i64>,
    /// Cell `c`'s place in group order; empty when the input is already
    /// grouped (each cell is at its own place).
    pub place: Vec<i64>,
    /// The index value of each group, ascending.
    pub keys: Vec<i64>,
}

/// Group cells by their `indexes` value: any values, sorted or not; memory
/// proportional to the number of cells when unsorted (each cell's place, 8
/// bytes a cell, and, for values spanning a range wider than the number of
/// cells, each cell's group, 4 bytes), to the number of groups otherwise,
/// never to the largest index value.  At most [`SORTED_CHUNK`] cells are
/// grouped on the calling thread, without rayon.
pub fn group_flat(indexes: &[i64]) -> FlatGroups {
    if let Some(g) = group_sorted(indexes, SORTED_CHUNK) {
        return g;
    }
    if let Some(g) = group_by_range(indexes) {
        return g;
    }
    // A counting sort by group: number the distinct values as they come (a
    // hash map, as large as the groups), rank them, count, and give each cell
    // its group's next place, so input order holds within a group.  Why:
    // sorting (index, cell) pairs took 1 s on 10M shuffled cells (100k
    // groups); this is linear.
    let mut ids: hashbrown::HashMap<i64, u32> = hashbrown::HashMap::new();
    let mut keys: Vec<i64> = Vec::new();
    let group: Vec<u32> = indexes
        .iter()
        .map(|&x| {
            *ids.entry(x).or_insert_with(|| {
                keys.push(x);
                (keys.len() - 1) as u32
            })
        })
        .collect();
    drop(ids);
    // rank[g]: the place of group g's value among the sorted values.
    let mut by_value: Vec<u32> = (0..keys.len() as u32).collect();
    by_value.sort_unstable_by_key(|&g| keys.get(g as usize).copied());
    let mut rank = vec![0u32; keys.len()];
    for (r, &g) in by_value.iter().enumerate() {
        if let Some(x) = rank.get_mut(g as usize) {
            *x = r as u32;
        }
    }
    let slot = |g: &u32| rank.get(*g as usize).map_or(0, |&r| r as usize);
    let (offsets, place) = places(&group, keys.len(), slot);
    let keys = by_value
        .iter()
        .filter_map(|&g| keys.get(g as usize).copied())
        .collect();
    FlatGroups {
        offsets,
        place,
        keys,
    }
}

/// The group offsets and each cell's place in group order, the cells' groups
/// numbered `slot(x) < groups` in the order of their values: count the cells
/// of each group, then give each cell, in input order, its group's next place.
/// Why places rather than the cells in group order: the cells are then copied
/// into group order by writes to their places, reading the input in order
/// ([`Numbers::in_groups`]); reading them through the group order instead
/// reads each cell from a random place, and on 10M shuffled cells those reads
/// cost about twice the writes (numpy, 2026-11-28: a gather of the scores and
/// labels 400-470 ms, a scatter of them 173 ms).
fn places<X: Sync>(
    cells: &[X],
    groups: usize,
    slot: impl Fn(&X) -> usize + Sync,
) -> (Vec<i64>, Vec<i64>) {
    let n = cells.len();
    // Parts of the cells counted and placed side by side, one per thread of
    // the pool, each with its own counters (groups x parts x 8 bytes, no more
    // than the cells' places); one part when the call is small.
    let parts = if n <= SORTED_CHUNK {
        1
    } else {
        rayon::current_num_threads().min(n / groups.max(1)).max(1)
    };
    let len = n.div_ceil(parts).max(1);
    let count = |part: &[X]| {
        let mut c = vec![0i64; groups];
        for x in part {
            if let Some(k) = c.get_mut(slot(x)) {
                *k += 1;
            }
        }
        c
    };
    let mut next: Vec<Vec<i64>> = if parts == 1 {
        vec![count(cells)]
    } else {
        cells.par_chunks(len).map(count).collect()
    };
    // offsets[v]: the cells of groups below v; next[p][v]: part p's first
    // place in group v (the parts in input order within a group).
    let mut offsets = Vec::with_capacity(groups + 1);
    let mut run = 0i64;
    for v in 0..groups {
        offsets.push(run);
        for part in next.iter_mut() {
            if let Some(k) = part.get_mut(v) {
                let c = *k;
                *k = run;
                run += c;
            }
        }
    }
    offsets.push(run);
    let take = |next: &mut Vec<i64>, x: &X| match next.get_mut(slot(x)) {
        Some(p) => {
            *p += 1;
            *p - 1
        }
        None => 0,
    };
    let place = match next.as_mut_slice() {
        [one] => cells.iter().map(|x| take(one, x)).collect(),
        all => {
            let mut place = vec![0i64; n];
            place
                .par_chunks_mut(len)
                .zip(cells.par_chunks(len))
                .zip(all.par_iter_mut())
                .for_each(|((out, part), next)| {
                    for (o, x) in out.iter_mut().zip(part) {
                        *o = take(next, x);
                    }
                });
            place
        }
    };
    (offsets, place)
}

/// Cells a task of the sorted-`indexes` scan reads: [`group_flat`] groups
/// at most this many cells in order on the calling thread, without the pool.
pub const SORTED_CHUNK: usize = 1 << 16;

/// [`group_flat`] of sorted `indexes` (`None` if they are not sorted): the
/// check and the group starts in one pass, chunk by chunk on the pool.  Why:
/// on 10M cells the serial check and scan took about as long as scoring the
/// groups on two threads (the flat path 2.3x the dense one against 1.2x on
/// one thread); each chunk compares its first cell with the cell before it,
/// so the starts are those of one serial scan.
fn group_sorted(indexes: &[i64], chunk: usize) -> Option<FlatGroups> {
    let chunk = chunk.max(1);
    // Chunk `c`'s group starts and their values; `None` if out of order.
    let part = |(c, cells): (usize, &[i64])| {
        let base = c * chunk;
        let mut prev = base.checked_sub(1).and_then(|p| indexes.get(p)).copied();
        let (mut starts, mut keys) = (Vec::new(), Vec::new());
        for (j, &x) in cells.iter().enumerate() {
            match prev {
                Some(p) if x < p => return None,
                Some(p) if x == p => {}
                _ => {
                    starts.push((base + j) as i64);
                    keys.push(x);
                }
            }
            prev = Some(x);
        }
        Some((starts, keys))
    };
    // One chunk: on this thread, in order (rayon's loop would start its
    // global pool when called outside one: `eval::with_threads_or_inline`).
    let parts: Vec<Option<(Vec<i64>, Vec<i64>)>> = if indexes.len() <= chunk {
        vec![part((0, indexes))]
    } else {
        indexes.par_chunks(chunk).enumerate().map(part).collect()
    };
    let mut offsets = Vec::new();
    let mut keys = Vec::new();
    for part in parts {
        let (starts, k) = part?;
        offsets.extend(starts);
        keys.extend(k);
    }
    offsets.push(indexes.len() as i64);
    Some(FlatGroups {
        offsets,
        place: Vec::new(),
        keys,
    })
}

/// [`group_flat`] when the index values span a range no wider than the
/// number of cells (query numbers, the usual case): a counting sort with one
/// counter per value of the range, no hashing (3x faster than the hash map on
/// 10M cells); `None` for a wider range.
fn group_by_range(indexes: &[i64]) -> Option<FlatGroups> {
    let first = *indexes.first()?;
    let span = |cells: &[i64]| {
        cells
            .iter()
            .fold((first, first), |(lo, hi), &x| (lo.min(x), hi.max(x)))
    };
    let (lo, hi) = if indexes.len() <= SORTED_CHUNK {
        span(indexes)
    } else {
        indexes
            .par_chunks(SORTED_CHUNK)
            .map(span)
            .reduce(|| (first, first), |a, b| (a.0.min(b.0), a.1.max(b.1)))
    };
    let width = usize::try_from(hi.checked_sub(lo)?).ok()?.checked_add(1)?;
    if width > indexes.len() {
        return None;
    }
    let (all, place) = places(indexes, width, |&x| (x - lo) as usize);
    // The values with cells, and the offsets of their groups alone.
    let mut offsets = vec![0i64];
    let mut keys = Vec::new();
    for (v, w) in all.windows(2).enumerate() {
        if w[1] > w[0] {
            keys.push(lo + v as i64);
            offsets.push(w[1]);
        }
    }
    Some(FlatGroups {
        offsets,
        place,
        keys,
    })
}

/// Score flat `(scores, labels)` cells (1 x N matrices) grouped by
/// [`group_flat`]: group `g` is query `g`, its cells in input order (so
/// `DenseTies::First` breaks ties by input position).
pub fn evaluate_flat(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    groups: &FlatGroups,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
) -> Result<DenseEvaluation> {
    flat_path(scores, labels, groups, metrics, level, ties, empty, false)
}

/// [`evaluate_flat`]; `general` as in [`dense_path`].  Ungrouped cells are
/// first copied into group order ([`Numbers::in_groups`]), so that every
/// group is a run of cells, read by the sparse path as a row when it applies.
#[allow(clippy::too_many_arguments)]
fn flat_path(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    groups: &FlatGroups,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
    general: bool,
) -> Result<DenseEvaluation> {
    let n = scores.shape().1;
    if scores.shape().0 != 1 || labels.shape() != (1, n) {
        return Err(Error::InvalidInput(format!(
            "scores and labels must be flat with as many cells, got {:?} and {:?}",
            scores.shape(),
            labels.shape()
        )));
    }
    let FlatGroups { offsets, place, .. } = groups;
    // Each place is checked where it is written (`to_places`), not by a scan
    // of its own here.
    let bad = offsets.first() != Some(&0)
        || offsets.last() != Some(&(n as i64))
        || offsets.windows(2).any(|w| w[1] < w[0])
        || (!place.is_empty() && place.len() != n);
    if bad {
        return Err(Error::InvalidInput(
            "internal: flat groups do not fit the cells".into(),
        ));
    }
    let runs = (offsets.as_slice(), metrics, level, ties, empty, general);
    if place.is_empty() {
        return flat_runs(scores, labels, runs, |q| q);
    }
    let (Some(s), Some(l)) = (scores.in_groups(place), labels.in_groups(place)) else {
        return Err(Error::InvalidInput(
            "internal: flat cells could not be put in group order".into(),
        ));
    };
    // The cell at place `q` (for a message only: a scan of the places).
    let cell = |q: usize| place.iter().position(|&p| p as usize == q).unwrap_or(q);
    flat_runs(&s.view(), &l.view(), runs, cell)
}

/// The groups of [`flat_path`] as runs of cells in group order:
/// `offsets[g]..offsets[g + 1]`; `cell(q)`: the input cell at place `q`, for
/// messages.
fn flat_runs(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    (offsets, metrics, level, ties, empty, general): (
        &[i64],
        &[MetricSpec],
        f64,
        DenseTies,
        Empty,
        bool,
    ),
    cell: impl Fn(usize) -> usize + Sync,
) -> Result<DenseEvaluation> {
    let n = scores.shape().1;
    let metrics = setup(metrics, level, ties, || {
        let mut row = Vec::new();
        labels.load_cells(0..n, &mut row);
        err::max_label(&row)
    })?;
    let fast = if general {
        None
    } else {
        sparse::plan(&metrics, level, ties, &Valid::All)
    };
    let general = |s: &mut Scratch, g: usize, out: &mut [f64]| {
        let (a, b) = (offsets[g] as usize, offsets[g + 1] as usize);
        scores.load_cells(a..b, &mut s.scores);
        labels.load_cells(a..b, &mut s.labels);
        check_row(&s.scores, &s.labels, |j| format!("[{}]", cell(a + j)))?;
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        rank_row(s, ties);
        score_row(s, &metrics, level, ties, out);
        Ok(false)
    };
    // Each group a run of cells, by blocks of rows as the dense path's
    // (`sparse::Layout::Runs`).
    let layout = sparse::Layout::Runs(offsets);
    let sparse = (scores, labels, &layout, level, empty);
    run_sparse(
        offsets.len() - 1,
        metrics.len(),
        fast.as_ref(),
        sparse,
        general,
    )
}

/// Vector-search recall of each row: `|approx[i, :k] ∩ exact[i, :k]| / k`,
/// distinct non-negative ids (negative ids are padding and match nothing).
pub fn knn_recall(approx: &Matrix<'_, i64>, exact: &Matrix<'_, i64>, k: usize) -> Result<Vec<f64>> {
    check_knn(approx.rows, exact.rows, approx.cols, exact.cols, k)?;
    // The rows `ROWS_AHEAD` on asked for, where only the first `k` of wider
    // rows are read (`knn_recall(I, gt, 10)` on 100-wide arrays): a cache
    // miss a row that the hardware does not fetch ahead.  100k rows of 100,
    // k = 10, one thread: 20.1 -> 7.0 ms (numpy's `I[:, :10] == gt[:, :10]`
    // 5.9).  Not on rows of `k` (their prefixes follow each other, and the
    // prefetches only cost: 5.46 -> 6.21 ms), a loop without them there.
    if approx.gapped_prefixes(k) || exact.gapped_prefixes(k) {
        knn_rows::<true>(approx, exact, k)
    } else {
        knn_rows::<false>(approx, exact, k)
    }
}

/// Rows of [`knn_recall`] and [`knn_recall_distances`] run in order on the
/// calling thread, without rayon, when there are no more (inside one task of
/// either loop: 1024 rows for ids, this many for distances), so that a binding may call them without the pool
/// (`eval::with_threads_or_inline`).
pub const KNN_TASK_ROWS: usize = 256;

/// [`knn_recall`]'s loop, prefetching the rows ahead when `AHEAD`.
fn knn_rows<const AHEAD: bool>(
    approx: &Matrix<'_, i64>,
    exact: &Matrix<'_, i64>,
    k: usize,
) -> Result<Vec<f64>> {
    let mut out = vec![0.0; approx.rows];
    let serial = approx.rows <= KNN_TASK_ROWS;
    let init = || KnnScratch::new(k);
    eval::try_for_each_row(&mut out, 1, serial, 1024, init, |s, i, o| {
        if AHEAD {
            approx.prefetch_prefix(i + ROWS_AHEAD, k);
            exact.prefetch_prefix(i + ROWS_AHEAD, k);
        }
        let a = approx.row_prefix(i, k, &mut s.a);
        let e = exact.row_prefix(i, k, &mut s.e);
        let n = if k <= SMALL_K {
            shared_small(a, e)
        } else {
            s.set.shared(a, e)
        };
        o.fill(n as f64 / k as f64);
        Ok::<(), Error>(())
    })?;
    Ok(out)
}

/// Rows ahead of the one read whose first cells are asked for, where rows
/// are read as prefixes lying apart (`Matrix::gapped_prefixes`): by
/// [`knn_recall`] and by the sparse path (`sparse::Layout::prefetch`).
const ROWS_AHEAD: usize = 8;

/// ann-benchmarks' recall: the approximate neighbours (of the first `k`)
/// whose distance is at most the `k`-th exact distance + `epsilon`, over `k`.
pub fn knn_recall_distances(
    approx: &Matrix<'_, f64>,
    exact: &Matrix<'_, f64>,
    k: usize,
    epsilon: f64,
) -> Result<Vec<f64>> {
    check_knn(approx.rows, exact.rows, approx.cols, exact.cols, k)?;
    let mut out = vec![0.0; approx.rows];
    let serial = approx.rows <= KNN_TASK_ROWS;
    eval::try_for_each_row(
        &mut out,
        1,
        serial,
        KNN_TASK_ROWS,
        || (),
        |_, i, o| {
            let t = exact.get(i, k - 1);
            if t.is_nan() {
                return Err(Error::InvalidInput(format!(
                    "exact distances[{i}, {}] is NaN",
                    k - 1
                )));
            }
            let t = t + epsilon;
            let hits = (0..k).filter(|&j| approx.get(i, j) <= t).count();
            o.fill(hits as f64 / k as f64);
            Ok(())
        },
    )?;
    Ok(out)
}

fn check_knn(ar: usize, er: usize, ac: usize, ec: usize, k: usize) -> Result<()> {
    if ar != er {
        return Err(Error::InvalidInput(format!(
            "approx has {ar} rows, exact {er}: they must match"
        )));
    }
    if k == 0 || k > ac || k > ec {
        return Err(Error::InvalidInput(format!(
            "k must be in 1..={} (approx has {ac} columns, exact {ec}), got {k}",
            ac.min(ec)
        )));
    }
    Ok(())
}

/// Up to this many neighbours a row is compared all against all; above, through
/// a hash set.  Why: for the usual k = 10 the k x k comparisons are
/// branch-free and in registers, faster than any set; at k = 100 sorting both
/// rows (the numpy idiom) cost 3.3 us a row, the set 0.5 us.
const SMALL_K: usize = 32;

/// Distinct non-negative ids of `a` found in `e`, all against all.  Not kept:
/// this loop compiled for AVX2 too, picked at run time (100k rows, k = 10, one
/// thread, 2026-11-28, Intel Xeon, both wheels in turn: best 9.6-12.6 ms
/// against 9.9-14.2, medians 14.5-15.5 either way).
fn shared_small(a: &[i64], e: &[i64]) -> usize {
    let mut n = 0;
    for (j, &x) in a.iter().enumerate() {
        let found = e.iter().fold(false, |f, &y| f | (y == x));
        // An id returned twice counts once (rare: checked only on a hit).
        if found && x >= 0 && !a[..j].contains(&x) {
            n += 1;
        }
    }
    n
}

/// Per-thread scratch of [`knn_recall`]: the rows when they are strided, and
/// the set for large k.
struct KnnScratch {
    a: Vec<i64>,
    e: Vec<i64>,
    set: IdSet,
}

impl KnnScratch {
    fn new(k: usize) -> Self {
        KnnScratch {
            a: Vec::new(),
            e: Vec::new(),
            set: IdSet::new(if k > SMALL_K { k } else { 0 }),
        }
    }
}

/// An open-addressing set of ids, reused row after row without clearing: a
/// slot belongs to the current row when its stamp is `2 * row` (an id of
/// `e`) or `2 * row + 1` (that id, already matched).
struct IdSet {
    keys: Vec<i64>,
    stamps: Vec<u32>,
    row: u32,
    shift: u32,
}

impl IdSet {
    /// A set for up to `k` ids, at most a quarter full.
    fn new(k: usize) -> Self {
        let size = (4 * k).next_power_of_two().max(2);
        IdSet {
            keys: vec![0; size],
            stamps: vec![0; size],
            row: 0,
            shift: 64 - size.trailing_zeros(),
        }
    }

    /// The slot holding `x` in this row, or the empty slot where it goes.
    #[inline]
    fn slot(&self, x: i64) -> usize {
        let mask = self.keys.len() - 1;
        let mut p = ((x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        loop {
            let p_ = p & mask;
            match (self.stamps.get(p_), self.keys.get(p_)) {
                (Some(&st), Some(&key)) if st >> 1 == self.row && key != x => p = p_ + 1,
                _ => return p_,
            }
        }
    }

    /// Distinct non-negative ids of `a` found in `e` (`e.len() <= k`).
    fn shared(&mut self, a: &[i64], e: &[i64]) -> usize {
        if self.row >= u32::MAX >> 1 {
            self.stamps.fill(0);
            self.row = 0;
        }
        self.row += 1;
        let (present, matched) = (self.row << 1, (self.row << 1) | 1);
        for &x in e.iter().filter(|&&x| x >= 0) {
            let p = self.slot(x);
            if let (Some(st), Some(key)) = (self.stamps.get_mut(p), self.keys.get_mut(p)) {
                if *st >> 1 != self.row {
                    *st = present;
                    *key = x;
                }
            }
        }
        let mut n = 0;
        for &x in a.iter().filter(|&&x| x >= 0) {
            let p = self.slot(x);
            if let Some(st) = self.stamps.get_mut(p) {
                if *st == present {
                    *st = matched;
                    n += 1;
                }
            }
        }
        n
    }
}

mod sparse;
#[cfg(test)]
mod tests;
