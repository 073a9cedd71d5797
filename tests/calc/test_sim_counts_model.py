"""calc.sim.counts: the counts over hand-made records (one warp instruction each), by the hardware's rules."""
from calc.sim.counts import Instr, counts_of, l2_traffic, lines_of, sectors_of, sum_counts, wavefronts_of


class Arr:
    """Stands in for a warpsim.Array: what an instruction's counts read of it."""

    def __init__(self, space="shared", itemsize=4, name="a"):
        self.space, self.itemsize, self.name = space, itemsize, name


def instr(index, size=4, space="shared", itemsize=4, kind="ld", lanes=None, base=0, live=32):
    lanes = tuple(range(len(index))) if lanes is None else lanes
    return Instr(0, 0, 0, 1, kind, Arr(space, itemsize), base, size, lanes, tuple(index), live, (None, (1, 0)))


def test_shared_phases_for_4_8_and_16_byte_accesses():
    # 4 B, lane i word i: one phase, 32 banks, 1 wavefront
    assert wavefronts_of(instr(range(32))) == (1, 1, 1)
    # 8 B (float2), lane i at element 2i: two half-warp phases of 16 lanes × 8 B = 128 B each
    assert wavefronts_of(instr([2 * i for i in range(32)], size=8)) == (2, 2, 1)
    # 16 B (float4), lane i at element 4i: four quarter-warp phases of 8 lanes × 16 B = 128 B
    assert wavefronts_of(instr([4 * i for i in range(32)], size=16)) == (4, 4, 1)
    # 16 B with a 32-word stride: each lane covers banks 0-3, so a phase of 8 lanes is 8-way
    assert wavefronts_of(instr([32 * i for i in range(32)], size=16)) == (32, 4, 8)


def test_bytes_and_broadcasts():
    # all lanes read one word: one wavefront; FP16 lanes pairing in a word: one word per pair
    assert wavefronts_of(instr([5] * 32)) == (1, 1, 1)
    assert wavefronts_of(instr(range(32), size=2, itemsize=2)) == (1, 1, 1)
    # 2-way: lanes i read word 2i (banks 0, 2, ..., 30 twice)
    assert wavefronts_of(instr([2 * i for i in range(32)]))[0] == 2


def test_sectors_and_lines_of_global_instructions():
    contiguous = instr(range(32), space="global", base=256)
    assert len(sectors_of(contiguous)) == 4 and len(lines_of(contiguous)) == 1
    c = counts_of(contiguous)
    assert (c.global_loads, c.sectors, c.lines, c.bytes_requested, c.bytes_moved) == (1, 4, 1, 128, 128)
    # 16-byte vectors, lane i at element 4i: 512 contiguous bytes = 16 sectors, 4 lines
    vec = instr([4 * i for i in range(32)], size=16, space="global")
    assert len(sectors_of(vec)) == 16 and len(lines_of(vec)) == 4


def test_divergence_and_flops():
    half = Instr(0, 0, 0, 1, "flop", None, 0, 0, tuple(range(16)), (2,) * 16, 32, (None, (1, 0)))
    c = counts_of(half)
    assert c.flops == 32 and c.divergent == 1 and c.lane_share == 0.5
    total = sum_counts([half, instr(range(32))])
    assert total.warp_instructions == 2 and total.shared_loads == 1 and total.flops == 32


def test_l2_write_back_and_lru():
    # store 4 sectors, read them back, then read 4 others through a 4-sector L2
    st = instr(range(32), space="global", kind="st")
    ld = instr(range(32), space="global")
    other = instr(range(32, 64), space="global")
    t = l2_traffic([st, ld, other], l2_bytes=4 * 32)
    # the read-back hits; the other read misses 4 sectors and evicts the 4 dirty ones (written back)
    assert (t.l2_read_hits, t.l2_read_misses, t.read_bytes, t.write_bytes) == (4, 4, 128, 128)
    assert l2_traffic([st, ld, other], l2_bytes=0).hbm_bytes == 128 + 128 + 128
