#!/usr/bin/env python3
"""Polynomial fits for src/cpu/vmath*.c (run by hand; the C files record what it printed).

Fits p(z) = sum c_k z^k to a function g on [a, b] by weighted least squares at many Chebyshev
points, in 60-digit arithmetic (mpmath), minimizing the relative error, rounds the coefficients
to double and reports the max relative error of the rounded polynomial. Usage:
    python3 fit.py NAME            (see FITS below)
"""
import sys
import mpmath as mp

mp.mp.dps = 60


def fit(g, a, b, deg, npts=None, w=None):
    npts = npts or 8 * (deg + 1)
    a, b = mp.mpf(a), mp.mpf(b)
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (i + mp.mpf(0.5)) / npts) for i in range(npts)]
    rows, rhs = [], []
    for x in xs:
        gx = g(x)
        wt = 1 / abs(gx) if gx != 0 else 1
        if w:
            wt = w(x)
        rows.append([wt * x**k for k in range(deg + 1)])
        rhs.append(wt * gx)
    A = mp.matrix(rows)
    y = mp.matrix(rhs)
    c = mp.qr_solve(A, y)[0]
    cd = [float(c[k]) for k in range(deg + 1)]
    # check
    err = 0
    for i in range(2000):
        x = a + (b - a) * i / 1999
        gx = g(x)
        px = mp.mpf(0)
        for k in reversed(range(deg + 1)):
            px = px * x + mp.mpf(cd[k])
        e = abs(px - gx) / abs(gx) if gx != 0 else abs(px)
        err = max(err, e)
    return cd, float(err)


def show(name, cd, err):
    print(f"/* {name}: max rel err {err:.3g} */")
    print("{" + ", ".join(repr(float(c)) if False else f"{c:.17g}" for c in cd) + "}")


def atan_p(z):  # atan(u) = u + u^3 P(u^2)
    u = mp.sqrt(z)
    return (mp.atan(u) - u) / (u**3) if z != 0 else mp.mpf(-1) / 3


def asin_p(z):  # asin(x) = x + x^3 P(x^2)
    u = mp.sqrt(z)
    return (mp.asin(u) - u) / (u**3) if z != 0 else mp.mpf(1) / 6


def log_p(z):  # log((1+s)/(1-s)) = 2s + s^3 P(s^2)
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / s**3 if z != 0 else mp.mpf(2) / 3


FITS = {
    "atan": lambda d: fit(atan_p, 0, 0.1915, d),
    "asin": lambda d: fit(asin_p, 0, 0.25, d),
    "log": lambda d: fit(log_p, 0, 0.02944, d),
}



def fit_shifted(g, a, b, deg):
    """fit g(a + u) for u in [0, b - a]: returns coefficients in u"""
    return fit(lambda u: g(a + u), 0, b - a, deg)


def erf_p(z):  # erf(x) = x (c0 + z P(z)), here fit erf(x)/x as a polynomial in z = x^2
    x = mp.sqrt(z)
    return mp.erf(x) / x if z != 0 else 2 / mp.sqrt(mp.pi)


def erfc_h(x):
    return mp.erfc(x) * mp.exp(x * x)


# erfc(x) e^(x^2) on [0.5, 28): intervals in x (variable u = x - mid) and, from 4 on, in t = 1/x
# (fitting x erfc(x) e^(x^2), variable u = t - mid)
ERFC_INTERVALS = [(0.5, 1.0, 'x'), (1.0, 1.5, 'x'), (1.5, 2.0, 'x'), (2.0, 2.5, 'x'), (2.5, 3.0, 'x'),
                  (3.0, 4.0, 'x'), (4.0, 6.0, 't'), (6.0, 9.0, 't'), (9.0, 28.0, 't')]


def erfc_table(deg):
    rows, mids, worst = [], [], 0
    for a, b, kind in ERFC_INTERVALS:
        if kind == 'x':
            m = (a + b) / 2
            cd, err = fit(lambda u: erfc_h(m + u), a - m, b - m, deg)
        else:
            ta, tb = 1 / mp.mpf(b), 1 / mp.mpf(a)
            m = float((ta + tb) / 2)
            cd, err = fit(lambda u: erfc_h(1 / (m + u)) / (m + u), float(ta) - m, float(tb) - m, deg)
        worst = max(worst, err)
        rows.append(cd)
        mids.append(m)
        print(f"/* [{a}, {b}) in {kind}, mid {m!r}: max rel err {err:.3g} */")
    print("mids {" + ", ".join(repr(m) for m in mids) + "}")
    print("{" + ",\n".join("{" + ", ".join(f"{c:.17g}" for c in r) + "}" for r in rows) + "}")
    return worst


FITS["erf"] = lambda d: fit(erf_p, 0, 1, d)

if __name__ == "__main__" and sys.argv[1] != "tables":
    name, deg = sys.argv[1], int(sys.argv[2])
    if name == "erfc":
        print("worst", erfc_table(deg))
    else:
        cd, err = FITS[name](deg)
        show(f"{name} deg {deg}", cd, err)


# ---- piecewise tables for lgamma, digamma (x in [0.5, 10)) and bessel_i1e ----
GAMMA_INTERVALS = ([(0.5 + 0.125 * i, 0.625 + 0.125 * i) for i in range(4)] +
                   [(1.0 + 0.25 * i, 1.25 + 0.25 * i) for i in range(4)] +
                   [(2.0 + 0.5 * i, 2.5 + 0.5 * i) for i in range(4)] +
                   [(4.0 + i, 5.0 + i) for i in range(6)])
DIGAMMA_ROOT = mp.findroot(mp.digamma, 1.4616321449683623)


def lgamma_g(x):  # lgamma(x) / ((x - 1)(x - 2)), the zeros at 1 and 2 removed
    if x == 1:
        return -mp.diff(mp.loggamma, 1)  # l'(1)/((1-2))
    if x == 2:
        return mp.diff(mp.loggamma, 2)
    return mp.loggamma(x) / ((x - 1) * (x - 2))


def digamma_g(x):  # digamma(x) / (x - x0)
    if abs(x - DIGAMMA_ROOT) < mp.mpf(10)**-40:
        return mp.polygamma(1, x)
    return mp.digamma(x) / (x - DIGAMMA_ROOT)


def i1e(x):
    return mp.besseli(1, x) * mp.exp(-abs(x))


I1E_INTERVALS = [(0.0, 1.0, 'x'), (1.0, 2.0, 'x'), (2.0, 3.0, 'x'), (3.0, 4.0, 'x'), (4.0, 5.5, 'x'),
                 (5.5, 8.0, 'x'), (0.0625, 0.125, 't'), (0.03125, 0.0625, 't'), (0.0078125, 0.03125, 't')]


def ptable(name, g, intervals, deg):
    rows, mids, worst = [], [], 0
    for iv in intervals:
        a, b = iv[0], iv[1]
        kind = iv[2] if len(iv) > 2 else 'x'
        m = (a + b) / 2
        if kind == 'x':
            cd, err = fit(lambda u: g(m + u), a - m, b - m, deg)
        else:  # t = 1/x: fit sqrt(x) g(x)
            def gt(u):
                t = m + u
                if t == 0:
                    return 1 / mp.sqrt(2 * mp.pi)
                return g(1 / t) / mp.sqrt(t)
            cd, err = fit(gt, a - m, b - m, deg)
        worst = max(worst, err)
        rows.append(cd)
        mids.append(m)
        print(f"/* {name} [{a}, {b}) {kind}: max rel err {err:.3g} */")
    print("mids {" + ", ".join(repr(m) for m in mids) + "}")
    print("{" + ",\n".join("{" + ", ".join(f"{c:.17g}" for c in r) + "}" for r in rows) + "}")
    print("worst", worst)


if __name__ == "__main__" and sys.argv[1] == "tables":
    deg = int(sys.argv[2])
    which = sys.argv[3]
    if which == "lgamma":
        ptable("lgamma", lgamma_g, GAMMA_INTERVALS, deg)
    elif which == "digamma":
        print("root", float(DIGAMMA_ROOT).hex(), float(DIGAMMA_ROOT - mp.mpf(float(DIGAMMA_ROOT))).hex())
        ptable("digamma", digamma_g, GAMMA_INTERVALS, deg)
    elif which == "i1e":
        ptable("i1e", lambda x: i1e(x) / x if x != 0 else mp.mpf(0.5), I1E_INTERVALS[:6], deg)
        ptable("i1e_t1", i1e, I1E_INTERVALS[6:7], 14)  # (rows padded with 0 to deg)
        ptable("i1e_t2", i1e, I1E_INTERVALS[7:], 11)
        # x >= 128: the asymptotic series sqrt(2 pi x) e^-x I1(x) = sum a_k x^-k, as a
        # polynomial in t = 1/x (scaled by 1/sqrt(2 pi))
        a = [mp.mpf(1)]
        for k in range(1, deg + 1):
            a.append(a[-1] * (-(4 - (2 * k - 1)**2)) / (8 * k))
        print("asym {" + ", ".join(f"{float(c / mp.sqrt(2 * mp.pi)):.17g}" for c in a) + "}")
