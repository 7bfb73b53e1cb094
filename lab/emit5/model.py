# Model of the carry emit (kernels/decode.cu `carry_emit`, FP_EMIT == 5),
# checked against byte-by-byte placement: per round of 32 tokens, lanes build
# whole staging words from their token's low-plane bytes and the tails of the
# tokens before them (a shuffle chain of two rounds, then the carry-in), and
# store the words they own with plain stores over garbage; long tokens'
# high-plane bytes are OR-ed in after. Random lengths (1..16, many 1s),
# shifts 0..15, W 8 and 16, K 2..8 rounds.   python3 lab/emit5/model.py
# (one shuffle round instead of two fails ~30% of the trials: the check
# can fail).
import random

def run(W, K, lens_all, shift, garbage=True):
    NW = W // 4
    n = len(lens_all)
    KB = 32 * K
    toks = [bytes(random.randrange(1, 256) for _ in range(L)) for L in lens_all]
    total = sum(lens_all)
    stage = [random.randrange(256) if garbage else 0 for _ in range(16 * KB + 64)]
    words = [None] * (len(stage) // 4)
    def w_of(b):  # staging word as int
        return sum(stage[4*b+i] << (8*i) for i in range(4))
    def store(w, val):
        for i in range(4):
            stage[4*w+i] = (val >> (8*i)) & 255
    pos = []
    acc = 0
    for L in lens_all:
        pos.append(acc); acc += L
    carry_prev = 0
    for k in range(K):
        lane_data = []
        for lane in range(32):
            j = 32*k + lane
            live = j < n
            L = lens_all[j] if live else 0
            Llo = min(L, W)
            P = shift + (pos[j] if live else total)
            a, s = P >> 2, P & 3
            lo = int.from_bytes(toks[j][:Llo].ljust(W, b'\0'), 'little') if live else 0
            v = [(lo >> (32*i)) & 0xffffffff for i in range(NW)]
            # contributions c[0..NW]: the token's low bytes shifted by s bytes
            c = []
            prev = 0
            for i in range(NW + 1):
                cur = v[i] if i < NW else 0
                x = ((cur << (8*s)) | (prev >> (32 - 8*s) if s else 0)) & 0xffffffff
                c.append(x); prev = cur
            e = (P + Llo - 1) >> 2 if Llo else a
            nw = e - a + 1
            t = c[nw - 1] if live else 0
            longt = L > W
            carries = live and e == ((P + L) >> 2)
            lane_data.append(dict(live=live, L=L, P=P, a=a, s=s, c=c, nw=nw, t=t, longt=longt, j=j, carries=carries))
        # chain: X = t | (nw==1 ? C : 0); C = s ? up(X) : 0; long -> X = 0
        X = [0]*32
        for lane in range(32):
            d = lane_data[lane]
            X[lane] = d['t'] if d['carries'] else 0
        for it in range(2):
            up = [carry_prev] + X[:31]
            newX = []
            C = []
            for lane in range(32):
                d = lane_data[lane]
                Cl = up[lane] if d['s'] else 0
                C.append(Cl)
                x = (d['t'] | (Cl if d['nw'] == 1 else 0)) if d['carries'] else 0
                newX.append(x)
            X = newX
        # final C from final X
        up = [carry_prev] + X[:31]
        for lane in range(32):
            d = lane_data[lane]
            if not d['live']:
                continue
            Cl = up[lane] if d['s'] else 0
            nxt = (d['P'] + d['L']) >> 2
            end = nxt + (1 if (d['j'] == n - 1 and (d['P'] + d['L']) & 3) else 0)
            for w in range(d['a'], end):
                r = w - d['a']
                val = (d['c'][r] if r <= NW else 0)
                if r == 0:
                    val |= Cl
                store(w, val)
        carry_prev = X[31]
    # high plane: OR the bytes past W
    for j, L in enumerate(lens_all):
        if L > W:
            P = shift + pos[j]
            for b in range(W, L):
                stage[P + b] |= toks[j][b]
    got = bytes(stage[shift:shift+total])
    want = b''.join(toks)
    return got == want

random.seed(1)
bad = 0
for trial in range(3000):
    W = random.choice([8, 16])
    K = random.choice([2, 4, 6, 8])
    n = random.randint(1, 32*K)
    mode = random.random()
    lens = [random.choice([1,1,2,2,3,4,5,8,9,12,16]) if mode < 0.5 else random.randint(1, 16) for _ in range(n)]
    if mode > 0.9: lens = [1]*n
    shift = random.randrange(16)
    if not run(W, K, lens, shift):
        bad += 1
        if bad < 5: print("FAIL", W, K, n, shift, lens[:40])
print("bad", bad)
assert bad == 0
