"""Mesh mass properties (signed tetrahedra) and safe mesh-path resolution."""

import math
import os
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import trimesh

from robot_dynamics.core.validation.mesh_inertia import (
    MeshLoadError,
    MeshResolutionError,
    load_mesh,
    mesh_mass_properties,
    resolve_mesh_path,
)

DATA = Path(__file__).resolve().parent / 'data' / 'broken_urdfs'
MESHES = DATA / 'meshes'
BOX_SIZE = np.array([0.2, 0.1, 0.05])
BOX_CENTRE = np.array([0.05, 0.0, 0.025])


@pytest.mark.parametrize('name', ['box.stl', 'box.obj'])
def test_box_mesh_inertia_equals_closed_form(name):
    vertices, faces, watertight = load_mesh(MESHES / name)
    solid = mesh_mass_properties(vertices, faces, watertight)
    mass = 3.0
    closed_form = pin.Inertia.FromBox(mass, *BOX_SIZE)
    assert watertight
    assert solid.volume == pytest.approx(np.prod(BOX_SIZE), rel=1e-12)
    np.testing.assert_allclose(solid.centroid, BOX_CENTRE, atol=1e-15)
    np.testing.assert_allclose(solid.inertia_com(mass), closed_form.inertia, rtol=0, atol=1e-12)


def test_inverted_mesh_has_negative_volume_and_the_same_inertia_per_mass():
    vertices, faces, _ = load_mesh(MESHES / 'box.stl')
    inverted_vertices, inverted_faces, _ = load_mesh(MESHES / 'box_inverted.stl')
    solid = mesh_mass_properties(vertices, faces)
    inverted = mesh_mass_properties(inverted_vertices, inverted_faces)
    assert inverted.volume == pytest.approx(-np.prod(BOX_SIZE), rel=1e-12)
    np.testing.assert_allclose(inverted.centroid, solid.centroid, atol=1e-15)
    np.testing.assert_allclose(inverted.inertia_per_mass, solid.inertia_per_mass, atol=1e-15)


def test_random_convex_mesh_matches_trimesh_mass_properties():
    rng = np.random.default_rng(7)
    hull = trimesh.convex.convex_hull(rng.normal(size=(60, 3)) * [0.3, 0.1, 0.2] + [1.0, -2.0, 0.5])
    solid = mesh_mass_properties(hull.vertices, hull.faces)
    reference = hull.mass_properties  # density 1: mass == volume
    assert solid.volume == pytest.approx(reference['volume'], rel=1e-12)
    np.testing.assert_allclose(solid.centroid, reference['center_mass'], atol=1e-12)
    np.testing.assert_allclose(
        solid.inertia_com(reference['mass']), reference['inertia'], atol=1e-14
    )


def test_prism_volume_error_follows_the_polygon_closed_form():
    """An n-gon prism under-estimates a cylinder's volume by 1 − (n/2π) sin(2π/n)."""
    n, radius, length = 8, 0.05, 0.2
    prism = trimesh.creation.cylinder(radius=radius, height=length, sections=n)
    solid = mesh_mass_properties(prism.vertices, prism.faces)
    error = 1.0 - solid.volume / (math.pi * radius**2 * length)
    assert error == pytest.approx(
        1.0 - n / (2.0 * math.pi) * math.sin(2.0 * math.pi / n), rel=1e-12
    )
    assert error == pytest.approx(9.97e-2, abs=5e-5)


def test_flat_mesh_is_refused():
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=float)
    with pytest.raises(MeshLoadError, match='no volume'):
        mesh_mass_properties(vertices, np.array([[0, 1, 2], [0, 2, 1]]))


def test_package_uri_resolves_inside_the_given_package_directory():
    path = resolve_mesh_path('package://corpus/meshes/box.stl', {'corpus': str(DATA)})
    assert path == (MESHES / 'box.stl').resolve()


@pytest.mark.parametrize(
    'filename',
    [
        'package://corpus/../../../../../../etc/hostname',
        'package://corpus/meshes/../../../../../../../etc/passwd',
    ],
)
def test_package_uri_cannot_escape_its_package(filename):
    with pytest.raises(MeshResolutionError, match='outside'):
        resolve_mesh_path(filename, {'corpus': str(DATA)})


def test_symlink_out_of_an_allowed_root_is_refused(tmp_path):
    os.symlink('/etc/hostname', tmp_path / 'link.stl')
    with pytest.raises(MeshResolutionError, match='outside'):
        resolve_mesh_path('file://' + str(tmp_path / 'link.stl'), allowed_roots=[str(tmp_path)])


def test_file_uri_is_read_only_under_allowed_roots():
    filename = 'file://' + str(MESHES / 'box.stl')
    assert resolve_mesh_path(filename, allowed_roots=[str(DATA)]) == (MESHES / 'box.stl').resolve()
    with pytest.raises(MeshResolutionError, match='allowed roots'):
        resolve_mesh_path(filename)
    with pytest.raises(MeshResolutionError):
        resolve_mesh_path('file:///etc/passwd', allowed_roots=[str(DATA)])


@pytest.mark.parametrize(
    'filename, reason',
    [
        ('package://no_such_package_xyz/a.stl', 'not known'),
        ('package://bad name/a.stl', 'not a valid ROS package name'),
        ('http://example.com/a.stl', 'only package:// and file://'),
        ('', 'no filename'),
    ],
)
def test_unresolvable_mesh_names_give_the_reason(filename, reason):
    with pytest.raises(MeshResolutionError, match=reason):
        resolve_mesh_path(filename, {}, [str(DATA)])


def test_mesh_over_the_size_limit_is_refused_before_reading():
    with pytest.raises(MeshLoadError, match='over the 100-byte mesh limit'):
        load_mesh(MESHES / 'box.stl', max_bytes=100)


def test_unsupported_and_malformed_mesh_files_are_refused(tmp_path):
    (tmp_path / 'part.3ds').write_bytes(b'\x4d\x4d')
    (tmp_path / 'empty.dae').write_text(
        '<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema"/>'
    )
    (tmp_path / 'junk.stl').write_bytes(b'\x00\x01 not a mesh')
    with pytest.raises(MeshLoadError, match='not read'):
        load_mesh(tmp_path / 'part.3ds')
    with pytest.raises(MeshLoadError, match='no triangles'):
        load_mesh(tmp_path / 'empty.dae')
    with pytest.raises(MeshLoadError):
        load_mesh(tmp_path / 'junk.stl')


# ---------------------------------------------------------------------------------------
# COLLADA, empty package names, and absurd meshes (generated here, never a hang or a crash)


def _collada(
    box: trimesh.Trimesh, node_transform: str = '', unit: float = 1.0, extra: str = ''
) -> str:
    """A COLLADA document placing ``box`` once, through a node with ``node_transform`` elements."""
    positions = ' '.join(repr(float(value)) for value in box.vertices.reshape(-1))
    indices = ' '.join(str(index) for index in box.faces.reshape(-1))
    return f'''<?xml version="1.0"?>{extra}
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit meter="{unit!r}" name="unit"/><up_axis>Z_UP</up_axis></asset>
  <library_geometries><geometry id="g"><mesh>
    <source id="p"><float_array id="pa" count="{box.vertices.size}">{positions}</float_array>
      <technique_common><accessor source="#pa" count="{len(box.vertices)}" stride="3"/>
        </technique_common></source>
    <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
    <triangles count="{len(box.faces)}"><input semantic="VERTEX" source="#v" offset="0"/>
      <p>{indices}</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="s">
    <node id="n">{node_transform}<instance_geometry url="#g"/></node>
  </visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>'''


def test_collada_box_inertia_equals_closed_form_with_node_transform_and_unit(tmp_path):
    box = trimesh.creation.box(extents=(200.0, 100.0, 50.0))  # millimetres, <unit meter="0.001">
    path = tmp_path / 'box.dae'
    path.write_text(
        _collada(box, '<translate>50 0 25</translate><rotate>0 0 1 90</rotate>', unit=0.001)
    )
    vertices, faces, closed = load_mesh(path)
    solid = mesh_mass_properties(vertices, faces, closed)
    rotated = pin.Inertia.FromBox(
        2.0, 0.1, 0.2, 0.05
    ).inertia  # x and y swapped by the 90° turn about z
    assert closed and solid.volume == pytest.approx(0.001, rel=1e-12)
    np.testing.assert_allclose(solid.centroid, [0.05, 0.0, 0.025], atol=1e-12)
    np.testing.assert_allclose(solid.inertia_com(2.0), rotated, atol=1e-12)


def test_collada_with_an_entity_declaration_is_refused(tmp_path):
    path = tmp_path / 'xxe.dae'
    path.write_text(
        _collada(
            trimesh.creation.box(), extra='<!DOCTYPE c [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        )
    )
    with pytest.raises(MeshLoadError, match='DOCTYPE or ENTITY'):
        load_mesh(path)


def test_package_uri_with_an_empty_package_name_names_the_next_segment():
    resolved = resolve_mesh_path(
        'package:///broken_urdfs/meshes/box.stl', {'broken_urdfs': str(DATA)}
    )
    assert resolved == (MESHES / 'box.stl').resolve()
    with pytest.raises(MeshResolutionError, match='outside'):
        resolve_mesh_path(
            'package:///broken_urdfs/../../../etc/passwd', {'broken_urdfs': str(DATA)}
        )


def test_mesh_over_the_face_limit_is_refused_with_the_count_before_parsing(tmp_path):
    path = tmp_path / 'huge.stl'
    header = b'\0' * 80 + (250_000).to_bytes(4, 'little')
    path.write_bytes(
        header + b'\0' * 50 * 1000
    )  # the header claims 250 000 triangles, the body is short
    with pytest.raises(MeshLoadError, match='250000 triangles, over the 200000 limit'):
        load_mesh(path)


def test_zero_volume_and_non_manifold_meshes_are_bounded_not_solid(tmp_path):
    flat = trimesh.Trimesh(
        vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]],
        faces=[[0, 1, 2], [1, 3, 2], [0, 2, 1], [1, 2, 3]],
    )
    flat.export(tmp_path / 'flat.stl')
    vertices, faces, closed = load_mesh(tmp_path / 'flat.stl')
    with pytest.raises(MeshLoadError, match='no volume'):
        mesh_mass_properties(vertices, faces, closed)
    box = trimesh.creation.box()
    fin = trimesh.Trimesh(
        vertices=np.vstack([box.vertices, [[2.0, 2.0, 2.0]]]),
        faces=np.vstack([box.faces, [[0, 1, 8]]]),
        process=False,
    )  # an edge shared by 3 faces
    fin.export(tmp_path / 'fin.stl')
    _, _, closed = load_mesh(tmp_path / 'fin.stl')
    assert not closed
