"""Which package libraries carry their own C++ runtime, read from their ELF headers."""

from __future__ import annotations

import shutil
import subprocess
import zipfile

import pytest

from compiler.pipeline import package_check

SOURCE = '#include <string>\nextern "C" int size_of(const char* s) { return std::string(s).size(); }\n'


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    """The same C++ built twice: libstdc++ linked as a shared library (g++'s default) and statically."""
    if shutil.which("g++") is None:
        pytest.fail("these tests need g++, which AOTInductor builds packages with too")
    folder = tmp_path_factory.mktemp("elf")
    (folder / "size.cpp").write_text(SOURCE)
    built = {}
    for name, flags in (("shared", []), ("static", ["-static-libstdc++"])):
        built[name] = folder / f"{name}.so"
        subprocess.run(["g++", "-shared", "-fPIC", *flags, "-o", str(built[name]), str(folder / "size.cpp")], check=True)
    return built


def test_needed_libraries_are_the_dynamic_sections_entries(libraries, tmp_path):
    with open(libraries["shared"], "rb") as shared, open(libraries["static"], "rb") as static:
        assert "libstdc++.so.6" in package_check.needed_libraries(shared)
        needed = package_check.needed_libraries(static)
    assert "libc.so.6" in needed and not any(lib.startswith("libstdc++") for lib in needed)
    (tmp_path / "text").write_text("not an ELF file")
    with open(tmp_path / "text", "rb") as text:
        assert package_check.needed_libraries(text) is None


def test_a_package_is_flagged_only_for_a_library_that_carries_the_runtime(libraries, tmp_path):
    package = tmp_path / "model.pt2"
    with zipfile.ZipFile(package, "w") as archive:
        archive.write(libraries["shared"], "model/data/aotinductor/model/a.wrapper.so")
        archive.write(libraries["static"], "model/data/aotinductor/model/b.wrapper.so")
        archive.writestr("model/data/aotinductor/model/a.wrapper.cpp", "// source")
    assert package_check.own_cpp_runtime(str(package)) == ["model/data/aotinductor/model/b.wrapper.so"]
