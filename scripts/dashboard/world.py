"""Writes the dashboard's world outline, Sources/HeraldServer/Dashboard/Static/world.geojson:
Natural Earth's 1:110m coastline (public domain; CC0 as Debian packages it) from Debian's
`r-cran-rnaturalearthdata`, read without R.

The package keeps its data sets in R's lazy-load database (data/Rdata.rdx, an index, and
data/Rdata.rdb, each object serialized and xz-compressed); `rdata` (PyPI) reads R's
serialization. Coordinates are rounded to 0.1 degree (about 11 km, finer than the 1:110m data
draws), which keeps the file near 70 kB. The map draws it when no tile server is configured, so
that an operator can see where a click places a location.

Usage: python3 scripts/dashboard/world.py OUTPUT  (needs `apt-get download r-cran-rnaturalearthdata`
unpacked with `dpkg-deb -x` into ./x, and `pip install rdata`; run once by hand, the output is
committed).
"""

import gzip
import json
import lzma
import struct
import sys

import rdata

DATA = "x/usr/lib/R/site-library/rnaturalearthdata/data/"


def tag_name(tag):
    while tag.info.type.name == "REF":
        tag = tag.referenced_object
    value = tag.value
    while hasattr(value, "value"):
        value = value.value
    return value.decode() if isinstance(value, bytes) else str(value)


def attributes(item):
    found, pair = {}, item.attributes
    while pair is not None and pair.info.type.name != "NILVALUE":
        found[tag_name(pair.tag)] = pair.value[0]
        pair = pair.value[1]
    return found


def main(output):
    index = rdata.conversion.convert(rdata.parser.parse_data(gzip.decompress(open(DATA + "Rdata.rdx", "rb").read())))
    offset, length = index["variables"]["coastline110"]
    blob = open(DATA + "Rdata.rdb", "rb").read()[offset:offset + length]
    assert blob[4:5] == b"Z", "an xz-compressed object"
    raw = lzma.decompress(blob[5:], format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}])
    lines = []
    for feature in attributes(rdata.parser.parse_data(raw).object)["lines"].value:
        for line in attributes(feature)["Lines"].value:
            coords = attributes(line)["coords"]
            count, values, points = attributes(coords)["dim"].value[0], coords.value, []
            for i in range(count):
                point = [round(float(values[i]), 1), round(float(values[count + i]), 1)]
                if not points or points[-1] != point:
                    points.append(point)
            if len(points) >= 2:
                lines.append(points)
    outline = {"type": "Feature", "properties": {
        "source": "Natural Earth 1:110m coastline (public domain), from Debian's r-cran-rnaturalearthdata; scripts/dashboard/world.py"},
        "geometry": {"type": "MultiLineString", "coordinates": lines}}
    with open(output, "w") as file:
        file.write(json.dumps(outline, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
