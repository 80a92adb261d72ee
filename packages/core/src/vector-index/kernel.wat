;; Dot products of one query with many float32 rows, four lanes at a time (WebAssembly
;; SIMD), the bit codes of rows (signs of a randomized Walsh-Hadamard transform), and Hamming
;; distances between codes, eight bytes at a time. Compiled to kernel-bytes.ts by scripts/build-kernel.mjs;
;; a test checks that the committed bytes are this file compiled.
;;
;; Rows are `stride` floats long and `stride` is a multiple of 8 (zero-padded),
;; so every loop step reads two whole 16-byte lanes of the query and the row.
(module
  (memory (export "memory") 1 65536)

  ;; out[i] = dot(query, row i) for the `count` rows stored one after another from `rows`.
  (func (export "dots") (param $query i32) (param $rows i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $bytes i32) (local $row i32) (local $end i32)
    (local.set $bytes (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $row (local.get $rows))
    (local.set $end (i32.add (local.get $rows) (i32.mul (local.get $count) (local.get $bytes))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $row) (local.get $end)))
        (f32.store (local.get $out) (call $dot (local.get $query) (local.get $row) (local.get $bytes)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $row (i32.add (local.get $row) (local.get $bytes)))
        (br $next))))

  ;; out[i] = dot(query, row slots[i]) for `count` slot numbers (i32) read from `slots`.
  (func $dotsAt (export "dotsAt") (param $query i32) (param $rows i32) (param $slots i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $bytes i32) (local $end i32)
    (local.set $bytes (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $end (i32.add (local.get $slots) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $slots) (local.get $end)))
        (f32.store (local.get $out)
          (call $dot (local.get $query)
            (i32.add (local.get $rows) (i32.mul (i32.load (local.get $slots)) (local.get $bytes)))
            (local.get $bytes)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $slots (i32.add (local.get $slots) (i32.const 4)))
        (br $next))))

  ;; The same as dotsAt, for slots far apart (an approximate search's candidates): four rows at a
  ;; time, so that their reads from memory overlap instead of waiting one after another (twice as
  ;; fast there; slower than dotsAt for rows read one after another). Each row's sums are $dot's, in
  ;; the same order, so a row scores the same either way.
  (func (export "dotsScattered") (param $query i32) (param $rows i32) (param $slots i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $bytes i32) (local $end i32) (local $at i32) (local $q v128) (local $p v128)
    (local $r0 i32) (local $r1 i32) (local $r2 i32) (local $r3 i32)
    (local $a0 v128) (local $b0 v128) (local $a1 v128) (local $b1 v128) (local $a2 v128) (local $b2 v128) (local $a3 v128) (local $b3 v128)
    (local.set $bytes (i32.shl (local.get $stride) (i32.const 2)))
    ;; Groups of four while there are four; the rest one at a time.
    (local.set $end (i32.add (local.get $slots) (i32.shl (i32.and (local.get $count) (i32.const -4)) (i32.const 2))))
    (block $fours
      (loop $four
        (br_if $fours (i32.ge_u (local.get $slots) (local.get $end)))
        (local.set $r0 (i32.add (local.get $rows) (i32.mul (i32.load (local.get $slots)) (local.get $bytes))))
        (local.set $r1 (i32.add (local.get $rows) (i32.mul (i32.load offset=4 (local.get $slots)) (local.get $bytes))))
        (local.set $r2 (i32.add (local.get $rows) (i32.mul (i32.load offset=8 (local.get $slots)) (local.get $bytes))))
        (local.set $r3 (i32.add (local.get $rows) (i32.mul (i32.load offset=12 (local.get $slots)) (local.get $bytes))))
        (local.set $a0 (v128.const i32x4 0 0 0 0)) (local.set $b0 (v128.const i32x4 0 0 0 0)) (local.set $a1 (v128.const i32x4 0 0 0 0)) (local.set $b1 (v128.const i32x4 0 0 0 0))
        (local.set $a2 (v128.const i32x4 0 0 0 0)) (local.set $b2 (v128.const i32x4 0 0 0 0)) (local.set $a3 (v128.const i32x4 0 0 0 0)) (local.set $b3 (v128.const i32x4 0 0 0 0))
        (local.set $at (i32.const 0))
        (loop $lane
          (local.set $q (v128.load (i32.add (local.get $query) (local.get $at))))
          (local.set $p (v128.load offset=16 (i32.add (local.get $query) (local.get $at))))
          (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load (i32.add (local.get $r0) (local.get $at))) (local.get $q))))
          (local.set $b0 (f32x4.add (local.get $b0) (f32x4.mul (v128.load offset=16 (i32.add (local.get $r0) (local.get $at))) (local.get $p))))
          (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load (i32.add (local.get $r1) (local.get $at))) (local.get $q))))
          (local.set $b1 (f32x4.add (local.get $b1) (f32x4.mul (v128.load offset=16 (i32.add (local.get $r1) (local.get $at))) (local.get $p))))
          (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load (i32.add (local.get $r2) (local.get $at))) (local.get $q))))
          (local.set $b2 (f32x4.add (local.get $b2) (f32x4.mul (v128.load offset=16 (i32.add (local.get $r2) (local.get $at))) (local.get $p))))
          (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (v128.load (i32.add (local.get $r3) (local.get $at))) (local.get $q))))
          (local.set $b3 (f32x4.add (local.get $b3) (f32x4.mul (v128.load offset=16 (i32.add (local.get $r3) (local.get $at))) (local.get $p))))
          (local.set $at (i32.add (local.get $at) (i32.const 32)))
          (br_if $lane (i32.lt_u (local.get $at) (local.get $bytes))))
        (f32.store (local.get $out) (call $sum (f32x4.add (local.get $a0) (local.get $b0))))
        (f32.store offset=4 (local.get $out) (call $sum (f32x4.add (local.get $a1) (local.get $b1))))
        (f32.store offset=8 (local.get $out) (call $sum (f32x4.add (local.get $a2) (local.get $b2))))
        (f32.store offset=12 (local.get $out) (call $sum (f32x4.add (local.get $a3) (local.get $b3))))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (local.set $slots (i32.add (local.get $slots) (i32.const 16)))
        (br $four)))
    (call $dotsAt (local.get $query) (local.get $rows) (local.get $slots) (i32.and (local.get $count) (i32.const 3)) (local.get $stride) (local.get $out)))

  ;; out[i] = the number of bits in which the code at `codes + slots[i] * codeBytes` differs from
  ;; the code at `query` (i32), for `count` slot numbers read from `slots`; histogram[d] (i32)
  ;; counts the distances d. `codeBytes` is a multiple of 16.
  (func (export "hammingsAt") (param $query i32) (param $codes i32) (param $slots i32) (param $count i32) (param $codeBytes i32) (param $out i32) (param $histogram i32)
    (local $end i32) (local $slot i32) (local $code i32) (local $at i32) (local $bits i64) (local $distance i32) (local $bin i32)
    (local.set $end (i32.add (local.get $slots) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $slots) (local.get $end)))
        (local.set $slot (i32.load (local.get $slots)))
        ;; Differing bits, 8 bytes at a time (i64.popcnt is one instruction on common CPUs, where the
        ;; SIMD i8x16.popcnt is several: a third slower here, measured).
        (local.set $code (i32.add (local.get $codes) (i32.mul (local.get $slot) (local.get $codeBytes))))
        (local.set $bits (i64.const 0))
        (local.set $at (i32.const 0))
        (loop $chunk
          (local.set $bits
            (i64.add (local.get $bits)
              (i64.add
                (i64.popcnt (i64.xor (i64.load (i32.add (local.get $code) (local.get $at))) (i64.load (i32.add (local.get $query) (local.get $at)))))
                (i64.popcnt (i64.xor (i64.load offset=8 (i32.add (local.get $code) (local.get $at))) (i64.load offset=8 (i32.add (local.get $query) (local.get $at))))))))
          (local.set $at (i32.add (local.get $at) (i32.const 16)))
          (br_if $chunk (i32.lt_u (local.get $at) (local.get $codeBytes))))
        (local.set $distance (i32.wrap_i64 (local.get $bits)))
        (i32.store (local.get $out) (local.get $distance))
        (local.set $bin (i32.add (local.get $histogram) (i32.shl (local.get $distance) (i32.const 2))))
        (i32.store (local.get $bin) (i32.add (i32.load (local.get $bin)) (i32.const 1)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $slots (i32.add (local.get $slots) (i32.const 4)))
        (br $next))))

  ;; For the `count` slot numbers read from `slots`: the pairs (slot, distance), two i32 each, of
  ;; the codes that differ from the query's in at most `cutoff` bits, written to `out` in order;
  ;; returns how many pairs.
  (func (export "within") (param $query i32) (param $codes i32) (param $slots i32) (param $count i32) (param $codeBytes i32) (param $cutoff i32) (param $out i32) (result i32)
    (local $end i32) (local $slot i32) (local $code i32) (local $at i32) (local $bits i64) (local $distance i32) (local $taken i32)
    (local.set $end (i32.add (local.get $slots) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $slots) (local.get $end)))
        (local.set $slot (i32.load (local.get $slots)))
        ;; Differing bits, 8 bytes at a time (the same loop as in hammingsAt: a call per code costs 20 %).
        (local.set $code (i32.add (local.get $codes) (i32.mul (local.get $slot) (local.get $codeBytes))))
        (local.set $bits (i64.const 0))
        (local.set $at (i32.const 0))
        (loop $chunk
          (local.set $bits
            (i64.add (local.get $bits)
              (i64.add
                (i64.popcnt (i64.xor (i64.load (i32.add (local.get $code) (local.get $at))) (i64.load (i32.add (local.get $query) (local.get $at)))))
                (i64.popcnt (i64.xor (i64.load offset=8 (i32.add (local.get $code) (local.get $at))) (i64.load offset=8 (i32.add (local.get $query) (local.get $at))))))))
          (local.set $at (i32.add (local.get $at) (i32.const 16)))
          (br_if $chunk (i32.lt_u (local.get $at) (local.get $codeBytes))))
        (local.set $distance (i32.wrap_i64 (local.get $bits)))
        (if (i32.le_u (local.get $distance) (local.get $cutoff))
          (then
            (i32.store (local.get $out) (local.get $slot))
            (i32.store offset=4 (local.get $out) (local.get $distance))
            (local.set $out (i32.add (local.get $out) (i32.const 8)))
            (local.set $taken (i32.add (local.get $taken) (i32.const 1)))))
        (local.set $slots (i32.add (local.get $slots) (i32.const 4)))
        (br $next)))
    (local.get $taken))

  ;; The bit code of the `stride` floats at `vector` (zero-padded past the dimension): bit i (of
  ;; `codeBits`, a multiple of 32) is set when coordinate i of H (signs * vector) is positive, H
  ;; being the Walsh-Hadamard transform of `length` (a power of two, at least 4 and at least
  ;; `stride`). `work` holds `length` floats of scratch space; `signs`, `length` floats of +1 or -1.
  (func (export "encode") (param $vector i32) (param $signs i32) (param $work i32) (param $length i32) (param $stride i32) (param $code i32) (param $codeBits i32)
    (local $at i32) (local $end i32) (local $half i32) (local $start i32) (local $v v128) (local $a v128) (local $b v128) (local $bits i32) (local $lane i32)
    ;; work = signs * vector, then zeros up to `length`.
    (local.set $end (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $at (i32.const 0))
    (block $copied
      (loop $copy
        (br_if $copied (i32.ge_u (local.get $at) (local.get $end)))
        (v128.store (i32.add (local.get $work) (local.get $at))
          (f32x4.mul (v128.load (i32.add (local.get $vector) (local.get $at))) (v128.load (i32.add (local.get $signs) (local.get $at)))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $copy)))
    (local.set $end (i32.shl (local.get $length) (i32.const 2)))
    (block $zeroed
      (loop $zero
        (br_if $zeroed (i32.ge_u (local.get $at) (local.get $end)))
        (v128.store (i32.add (local.get $work) (local.get $at)) (v128.const i32x4 0 0 0 0))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $zero)))
    ;; The first two butterfly steps (pairs 1 and 2 floats apart) inside each group of four lanes.
    (local.set $at (i32.const 0))
    (block $small
      (loop $four
        (br_if $small (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $v (v128.load (i32.add (local.get $work) (local.get $at))))
        (local.set $v
          (f32x4.add
            (f32x4.mul (local.get $v) (v128.const f32x4 1 -1 1 -1))
            (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $v) (local.get $v))))
        (local.set $v
          (f32x4.add
            (f32x4.mul (local.get $v) (v128.const f32x4 1 1 -1 -1))
            (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
        (v128.store (i32.add (local.get $work) (local.get $at)) (local.get $v))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $four)))
    ;; The other steps, four lanes at a time: pairs `half` bytes apart (16, 32, ... bytes).
    (local.set $half (i32.const 16))
    (block $steps
      (loop $step
        (br_if $steps (i32.ge_u (local.get $half) (local.get $end)))
        (local.set $start (i32.const 0))
        (block $blocks
          (loop $block
            (br_if $blocks (i32.ge_u (local.get $start) (local.get $end)))
            (local.set $at (local.get $start))
            (block $pairs
              (loop $pair
                (br_if $pairs (i32.ge_u (local.get $at) (i32.add (local.get $start) (local.get $half))))
                (local.set $a (v128.load (i32.add (local.get $work) (local.get $at))))
                (local.set $b (v128.load (i32.add (local.get $work) (i32.add (local.get $at) (local.get $half)))))
                (v128.store (i32.add (local.get $work) (local.get $at)) (f32x4.add (local.get $a) (local.get $b)))
                (v128.store (i32.add (local.get $work) (i32.add (local.get $at) (local.get $half))) (f32x4.sub (local.get $a) (local.get $b)))
                (local.set $at (i32.add (local.get $at) (i32.const 16)))
                (br $pair)))
            (local.set $start (i32.add (local.get $start) (i32.shl (local.get $half) (i32.const 1))))
            (br $block)))
        (local.set $half (i32.shl (local.get $half) (i32.const 1)))
        (br $step)))
    ;; The signs, 32 to a word: four lanes' signs per compare, eight compares per word.
    (local.set $end (i32.shl (local.get $codeBits) (i32.const 2)))
    (local.set $at (i32.const 0))
    (block $packed
      (loop $word
        (br_if $packed (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $bits (i32.const 0))
        (local.set $lane (i32.const 0))
        (loop $group
          (local.set $bits
            (i32.or (local.get $bits)
              (i32.shl
                (i32x4.bitmask (f32x4.gt (v128.load (i32.add (local.get $work) (i32.add (local.get $at) (i32.shl (local.get $lane) (i32.const 2))))) (v128.const i32x4 0 0 0 0)))
                (local.get $lane))))
          (local.set $lane (i32.add (local.get $lane) (i32.const 4)))
          (br_if $group (i32.lt_u (local.get $lane) (i32.const 32))))
        (i32.store (local.get $code) (local.get $bits))
        (local.set $code (i32.add (local.get $code) (i32.const 4)))
        (local.set $at (i32.add (local.get $at) (i32.const 128)))
        (br $word))))

  ;; dot(query, row) over `bytes` bytes (a multiple of 32), in two running sums of four lanes.
  (func $dot (param $query i32) (param $row i32) (param $bytes i32) (result f32)
    (local $end i32) (local $a v128) (local $b v128)
    (local.set $end (i32.add (local.get $row) (local.get $bytes)))
    (loop $next
      (local.set $a (f32x4.add (local.get $a) (f32x4.mul (v128.load (local.get $row)) (v128.load (local.get $query)))))
      (local.set $b (f32x4.add (local.get $b) (f32x4.mul (v128.load offset=16 (local.get $row)) (v128.load offset=16 (local.get $query)))))
      (local.set $row (i32.add (local.get $row) (i32.const 32)))
      (local.set $query (i32.add (local.get $query) (i32.const 32)))
      (br_if $next (i32.lt_u (local.get $row) (local.get $end))))
    (call $sum (f32x4.add (local.get $a) (local.get $b))))

  ;; The sum of four lanes.
  (func $sum (param $a v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
      (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a))))))
