"""Saving and exporting never lose or silently replace what the user has: save(path) over a file or a
folder holding other files leaves them as they are and raises; an exported module edited or damaged after
export is refused on load rather than run."""

import pytest
import tvm

import tilelang_tt
from tests.kernels import eltwise
from tilelang_tt.artifacts import SOURCE_NAMES, Artifacts
from tilelang_tt.module import ModuleFileError, TenstorrentModule


@pytest.fixture(scope="module")
def artifacts():
    return tilelang_tt.compile(eltwise("add", 64, 96, 32, 32))


def test_save_over_an_existing_file_leaves_it_untouched_and_raises(artifacts, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("the user's notes\n")
    with pytest.raises(FileExistsError, match=r"notes.txt is a file, not a folder.*left as it is"):
        artifacts.save(path)
    assert path.read_text() == "the user's notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_save_into_a_folder_holding_other_files_leaves_it_untouched_and_raises(artifacts, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("print('hi')\n")
    (project / "data").mkdir()
    with pytest.raises(FileExistsError, match=r"holds data, train.py, which no save wrote"):
        artifacts.save(project)
    assert sorted(p.name for p in project.iterdir()) == ["data", "train.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]  # no staging folder left


def test_save_replaces_an_earlier_save_of_a_program_or_a_module(artifacts, tmp_path):
    target = artifacts.save(tmp_path / "out")
    assert sorted(p.name for p in target.iterdir()) == sorted([*SOURCE_NAMES, "source_map.json"])
    assert Artifacts.load(artifacts.save(target)).sources == artifacts.sources
    module = TenstorrentModule({"add": artifacts, "again": artifacts})
    assert sorted(p.name for p in module.save(target).iterdir()) == ["add", "again"]
    assert Artifacts.load(artifacts.save(target)).sources == artifacts.sources  # a module's folder replaced


def test_an_exported_module_edited_after_export_is_refused(artifacts, tmp_path):
    module = TenstorrentModule({"main": artifacts})
    path = module.export_library(tmp_path / "add.tenstorrent")
    assert TenstorrentModule.load(path).artifacts.sources == artifacts.sources
    text = path.read_text()
    assert "add_tiles(" in text
    path.write_text(text.replace("add_tiles(", "sub_tiles("))
    for load in (TenstorrentModule.load, lambda p: tvm.runtime.load_module(str(p))):
        with pytest.raises(ModuleFileError, match=r"add.tenstorrent was changed or damaged after it was exported"):
            load(path)


def test_a_module_file_without_its_digest_line_is_refused(artifacts, tmp_path):
    path = TenstorrentModule({"main": artifacts}).export_library(tmp_path / "add.tenstorrent")
    header, _, rest = path.read_text().partition("\n")
    path.write_text(header + "\n" + rest.partition("\n")[2])
    with pytest.raises(ModuleFileError, match=r"has no digest line"):
        TenstorrentModule.load(path)
