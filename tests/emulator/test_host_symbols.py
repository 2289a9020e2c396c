"""Every host API entry point main.cpp uses must be exported by the pinned libtt_metal.so."""

from __future__ import annotations

from tests.emulator.eltwise_add import make_plan
from tilelang_tt.codegen.host import emit_main_cpp
from tilelang_tt.tools.host_symbols import api_uses, check_main_cpp


def test_generated_main_cpp_uses_only_exported_symbols():
    assert check_main_cpp(emit_main_cpp(make_plan())) == []


def test_api_calls_resolve_to_the_expected_symbols():
    resolved = {(use.written, use.symbol) for use in api_uses(emit_main_cpp(make_plan()))}
    for written, symbol in [
        ("distributed::MeshDevice::create_unit_mesh", "tt::tt_metal::distributed::MeshDevice::create_unit_mesh"),
        ("distributed::MeshBuffer::create", "tt::tt_metal::distributed::MeshBuffer::create"),
        ("reference->address", "tt::tt_metal::Buffer::address"),
        ("command_queue.enqueue_write_mesh_buffer", "tt::tt_metal::distributed::MeshCommandQueueBase::enqueue_write_mesh_buffer"),
        ("CreateKernel", "tt::tt_metal::CreateKernel"),
        ("cb0_config", "tt::tt_metal::CircularBufferConfig::CircularBufferConfig"),
        ("cb0_config.set_page_size", "tt::tt_metal::CircularBufferConfig::set_page_size"),
        ("reader_accessor_A.append_to", "tt::tt_metal::TensorAccessorArgs::append_to"),
        ("SetRuntimeArgs", "tt::tt_metal::SetRuntimeArgs"),
        ("distributed::MeshWorkload", "tt::tt_metal::distributed::MeshWorkload::MeshWorkload"),
        ("workload.add_program", "tt::tt_metal::distributed::MeshWorkload::add_program"),
        ("distributed::EnqueueMeshWorkload", "tt::tt_metal::distributed::EnqueueMeshWorkload"),
        ("distributed::Finish", "tt::tt_metal::distributed::Finish"),
        ("device->close", "tt::tt_metal::distributed::MeshDevice::close"),
    ]:
        assert (written, symbol) in resolved


def test_header_only_and_unknown_calls_are_reported():
    source = emit_main_cpp(make_plan())
    # Header-only in 0.81.1: the inline MeshBuffer::address and the EnqueueWriteMeshBuffer template.
    inline_address = source.replace(
        "Buffer* reference = buffer->get_reference_buffer();\n    return static_cast<uint32_t>(reference->address());",
        "return static_cast<uint32_t>(buffer->address());",
    )
    template_write = source.replace(
        "command_queue.enqueue_write_mesh_buffer(buffer_A, tiled_A.data(), false);",
        "distributed::EnqueueWriteMeshBuffer(command_queue, buffer_A, tiled_A, false);",
    )
    unknown = source.replace("CreateProgram();", "CreateProgramFromThinAir();")
    too_many_args = source.replace("distributed::Finish(command_queue);", "distributed::Finish(command_queue, {}, 7);")
    assert [m for m in check_main_cpp(inline_address) if "MeshBuffer::address" in m]
    assert [m for m in check_main_cpp(template_write) if "EnqueueWriteMeshBuffer" in m]
    assert [m for m in check_main_cpp(unknown) if "CreateProgramFromThinAir" in m]
    assert [m for m in check_main_cpp(too_many_args) if "distributed::Finish (3 args)" in m]
    for variant in (inline_address, template_write, unknown, too_many_args):
        assert len(check_main_cpp(variant)) == 1
