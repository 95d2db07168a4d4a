"""kubefake/quantity.py - resource quantities ("500m", "512Mi", "1e3").

apimachinery pkg/api/resource/quantity.go: a signed decimal number with an
optional binary suffix (Ki Mi Gi Ti Pi Ei), decimal suffix (n u m "" k M G
T P E) or decimal exponent (e3, E-2).  Values come back as Fractions of the
base unit, exact.
"""
import re
from fractions import Fraction

_RE = re.compile(r"^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
_BIN = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}
_DEC = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
        "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


class QuantityError(ValueError):
    pass


def parse(q):
    """The quantity's value as a Fraction; QuantityError when malformed."""
    if isinstance(q, bool):
        raise QuantityError("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    if isinstance(q, int):
        return Fraction(q)
    if not isinstance(q, str):
        raise QuantityError("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    m = _RE.match(q.strip())
    if not m:
        raise QuantityError("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    sign, num, suf = m.group(1), m.group(2), m.group(3) or ""
    v = Fraction(num)
    if suf in _BIN:
        v *= _BIN[suf]
    elif suf in _DEC:
        v *= _DEC[suf]
    else:
        v *= Fraction(10) ** int(suf[1:])
    return -v if sign == "-" else v


def fmt(v, kind):
    """A value back as the API server would print it in quota messages."""
    if kind == "cpu":
        if v.denominator == 1:
            return str(v.numerator)
        return "%dm" % int(v * 1000)
    if v.denominator == 1 and v.numerator % (1 << 30) == 0 and v.numerator:
        return "%dGi" % (v.numerator >> 30)
    if v.denominator == 1 and v.numerator % (1 << 20) == 0 and v.numerator:
        return "%dMi" % (v.numerator >> 20)
    if v.denominator == 1 and v.numerator % 1024 == 0 and v.numerator:
        return "%dKi" % (v.numerator >> 10)
    return str(int(v))
