"""La matriz de autoridad: quién firma qué importe, cuántas firmas, y sus versiones en la base."""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agente.demo.carga import cargar_demo
from agente.servicio.politica.gestion_autoridad import (
    ambito_firmante,
    darse_de_baja,
    fijar_matriz,
    historial_matriz,
)
from nucleo.errores import Prohibido
from nucleo.operaciones import OPERACIONES
from politicas.lectura_matriz import VersionesMatriz, leer_matriz, leer_matriz_por_id
from politicas.matriz_autoridad import (
    Matriz,
    Requisito,
    admite_firma,
    autoridad_necesaria,
    firmas_completas,
    oleadas_de_aviso,
    puede_firmar,
)

D = Decimal
ROLES = ("encargado", "gerente", "regional")
POR_DEFECTO = Matriz(
    limites={
        "reembolso": {"encargado": D("300"), "gerente": D("1000"), "regional": None},
        "sustitucion": {"encargado": D("300"), "gerente": D("1000"), "regional": None},
    },
    dos_firmas_por_encima={"reembolso": D("500"), "sustitucion": D("500")},
)


# --- La matriz por defecto -----------------------------------------------------------

@pytest.mark.parametrize(
    ("importe", "firmas", "rol"),
    [
        ("120.00", 1, "encargado"),
        ("300.00", 1, "encargado"),
        ("300.01", 1, "gerente"),
        ("350.00", 1, "gerente"),
        ("500.00", 1, "gerente"),
        ("500.01", 2, "gerente"),
        ("650.00", 2, "gerente"),
        ("1000.00", 2, "gerente"),
        ("1000.01", 2, "regional"),
    ],
)
def test_la_matriz_por_defecto_exige_el_rol_y_las_firmas_del_tramo(importe, firmas, rol):
    requisito = autoridad_necesaria(POR_DEFECTO, "reembolso", importe)
    assert requisito == Requisito(importe=D(importe), firmas=firmas, rol_minimo=rol)


def test_sin_importe_o_con_importe_no_positivo_basta_el_rol_mas_bajo_salvo_si_la_regla_lo_necesita():
    # Un cambio a un producto más barato o una consulta: una firma de encargado.
    assert autoridad_necesaria(POR_DEFECTO, "sustitucion", "-20.00") == Requisito(None, 1, "encargado")
    assert autoridad_necesaria(POR_DEFECTO, "consulta", None) == Requisito(None, 1, "encargado")
    # Se cierra hacia el lado seguro: un reembolso de importe desconocido, o una regla con
    # importe que la matriz no conoce, exige el rol más alto.
    assert autoridad_necesaria(POR_DEFECTO, "reembolso", None).rol_minimo == "regional"
    assert autoridad_necesaria(POR_DEFECTO, "regla_nueva", "10.00").rol_minimo == "regional"


def test_el_encargado_no_firma_350_y_el_motivo_dice_su_limite():
    permiso = puede_firmar(POR_DEFECTO, "encargado", "reembolso", "350.00")
    assert not permiso
    assert permiso.motivo == (
        "tu límite es 300,00 EUR y este reembolso es de 350,00 EUR: necesita gerente o superior"
    )
    assert puede_firmar(POR_DEFECTO, "gerente", "reembolso", "350.00")
    assert puede_firmar(POR_DEFECTO, "regional", "reembolso", "350.00")


def test_650_necesita_dos_personas_y_una_que_cubra_el_importe():
    assert not puede_firmar(POR_DEFECTO, "encargado", "reembolso", "650.00")
    assert admite_firma(POR_DEFECTO, "encargado", "reembolso", "650.00")  # una de las dos
    segunda = admite_firma(POR_DEFECTO, "encargado", "reembolso", "650.00", previas=["encargado"])
    assert not segunda
    assert segunda.motivo == (
        "tu límite es 300,00 EUR y este reembolso es de 650,00 EUR: necesita gerente o "
        "superior para la firma que falta"
    )
    assert admite_firma(POR_DEFECTO, "gerente", "reembolso", "650.00", previas=["encargado"])
    assert admite_firma(POR_DEFECTO, "encargado", "reembolso", "650.00", previas=["gerente"])
    assert not admite_firma(POR_DEFECTO, "gerente", "reembolso", "650.00", previas=["gerente", "encargado"])
    assert not admite_firma(POR_DEFECTO, "encargado", "reembolso", "350.00")
    assert not firmas_completas(POR_DEFECTO, "reembolso", "650.00", ["encargado", "encargado"])
    assert not firmas_completas(POR_DEFECTO, "reembolso", "650.00", ["gerente"])
    assert firmas_completas(POR_DEFECTO, "reembolso", "650.00", ["encargado", "gerente"])
    assert firmas_completas(POR_DEFECTO, "reembolso", "650.00", ["regional", "encargado"])


def test_un_rol_que_no_firma_la_regla_se_rechaza():
    matriz = Matriz(limites={"reembolso": {"gerente": D("1000"), "regional": None}})
    permiso = puede_firmar(matriz, "encargado", "reembolso", "10.00")
    assert not permiso and "no firma este reembolso" in permiso.motivo
    assert not puede_firmar(POR_DEFECTO, "becario", "reembolso", "10.00")


@pytest.mark.parametrize(
    "limites",
    [
        {"reembolso": {"encargado": D("300"), "gerente": D("1000"), "regional": D("5000")}},
        {"reembolso": {"encargado": D("300"), "gerente": D("100"), "regional": None}},
        {"reembolso": {"encargado": None, "gerente": D("100"), "regional": None}},
        {"reembolso": {"encargado": D("-1"), "regional": None}},
        {"reembolso": {"jefe": None}},
    ],
)
def test_una_matriz_incoherente_no_se_construye(limites):
    with pytest.raises(ValueError):
        Matriz(limites=limites)


def test_las_oleadas_de_aviso_empiezan_por_quien_puede_firmar_y_suben():
    assert oleadas_de_aviso(POR_DEFECTO, Requisito(D("120"), 1, "encargado")) == (
        ("encargado",), ("gerente",), ("regional",),
    )
    assert oleadas_de_aviso(POR_DEFECTO, Requisito(D("350"), 1, "gerente")) == (("gerente",), ("regional",))
    # Con doble firma, el encargado puede ser la otra firma: se le avisa desde el principio.
    assert oleadas_de_aviso(POR_DEFECTO, Requisito(D("650"), 2, "gerente")) == (
        ("encargado", "gerente"), ("regional",),
    )


# --- Propiedades ---------------------------------------------------------------------

dinero_st = st.decimals(min_value=D("0.01"), max_value=D("100000"), places=2)


@st.composite
def matrices(draw):
    """Matrices válidas: límites que no bajan al subir de rol, el más alto sin límite."""
    limites = sorted(draw(st.lists(dinero_st, min_size=2, max_size=2)))
    umbral = draw(st.none() | dinero_st)
    por_rol = {"encargado": limites[0], "gerente": limites[1], "regional": None}
    return Matriz(limites={"reembolso": por_rol}, dos_firmas_por_encima={"reembolso": umbral})


@settings(max_examples=200, deadline=None)
@given(matriz=matrices(), a=dinero_st, b=dinero_st)
def test_un_importe_mayor_nunca_necesita_menos(matriz, a, b):
    bajo, alto = sorted((a, b))
    r_bajo = autoridad_necesaria(matriz, "reembolso", bajo)
    r_alto = autoridad_necesaria(matriz, "reembolso", alto)
    assert r_alto.firmas >= r_bajo.firmas
    assert matriz.nivel(r_alto.rol_minimo) >= matriz.nivel(r_bajo.rol_minimo)


@settings(max_examples=200, deadline=None)
@given(matriz=matrices(), a=dinero_st, b=dinero_st, rol=st.sampled_from(ROLES))
def test_quien_firma_un_importe_firma_cualquiera_menor(matriz, a, b, rol):
    bajo, alto = sorted((a, b))
    if puede_firmar(matriz, rol, "reembolso", alto):
        assert puede_firmar(matriz, rol, "reembolso", bajo)


@settings(max_examples=200, deadline=None)
@given(matriz=matrices(), importe=dinero_st, roles=st.lists(st.sampled_from(ROLES), max_size=3))
def test_por_encima_del_umbral_hacen_falta_dos_firmas_y_una_que_cubra(matriz, importe, roles):
    umbral = matriz.dos_firmas_por_encima["reembolso"]
    completas = firmas_completas(matriz, "reembolso", importe, roles)
    if umbral is not None and importe > umbral and len(roles) < 2:
        assert not completas
    cubre = [r for r in roles if matriz.limite(r, "reembolso") is None or importe <= matriz.limite(r, "reembolso")]
    if not cubre:
        assert not completas
    if completas:
        assert len(roles) >= autoridad_necesaria(matriz, "reembolso", importe).firmas


@settings(max_examples=200, deadline=None)
@given(matriz=matrices(), importe=dinero_st, orden=st.permutations(ROLES))
def test_recoger_firmas_aceptadas_de_una_en_una_acaba_completo(matriz, importe, orden):
    """Quien firma lo que ``puede_firmar`` acepta nunca deja la aprobación en un callejón."""
    previas: list[str] = []
    for rol in orden:
        if firmas_completas(matriz, "reembolso", importe, previas):
            break
        if admite_firma(matriz, rol, "reembolso", importe, previas=previas):
            previas.append(rol)
    assert firmas_completas(matriz, "reembolso", importe, previas)


# --- En la base: la matriz por defecto, versiones por tienda -------------------------

def test_la_migracion_trae_la_matriz_por_defecto_del_enunciado(conexion):
    # Cada operación nueva añade una versión con sus filas (sql/019...): la vigente es la última.
    matriz = leer_matriz(conexion, tienda="talavera")
    assert matriz.tienda is None and matriz.creada_por == "sistema"
    assert leer_matriz(conexion, tienda=None, version=1).creada_por == "sistema"
    assert matriz.roles == ROLES
    for regla in ("reembolso", "sustitucion"):
        assert dict(matriz.limites[regla]) == {
            "encargado": D("300.00"), "gerente": D("1000.00"), "regional": None,
        }
        assert matriz.dos_firmas_por_encima[regla] == D("500.00")
    for op in OPERACIONES:  # y las de cada operación, las que declara
        assert dict(matriz.limites[op.regla]) == dict(op.matriz.limites)


def _limites(encargado: str) -> dict:
    por_rol = {"encargado": D(encargado), "gerente": D("1000"), "regional": None}
    # Una matriz completa lleva filas de cada operación declarada (fijar_matriz lo exige).
    return {op.regla: por_rol for op in OPERACIONES}


def test_cada_cambio_de_la_matriz_es_una_version_nueva_y_las_viejas_se_leen_igual(conexion):
    v1 = fijar_matriz(conexion, tienda="talavera", limites=_limites("200"),
                      dos_firmas_por_encima={"reembolso": D("400")}, autor="ger-talavera",
                      motivo="temporada alta")
    v2 = fijar_matriz(conexion, tienda="talavera", limites=_limites("250"),
                      dos_firmas_por_encima={"reembolso": D("400")}, autor="reg-centro")
    assert (v1.tienda, v1.version, v2.version) == ("talavera", 1, 2)
    assert leer_matriz(conexion, tienda="talavera").id == v2.id
    antigua = leer_matriz(conexion, tienda="talavera", version=1)
    assert antigua == leer_matriz_por_id(conexion, v1.id)
    assert antigua.limite("encargado", "reembolso") == D("200.00")
    assert autoridad_necesaria(antigua, "reembolso", "220.00").rol_minimo == "gerente"
    assert autoridad_necesaria(v2, "reembolso", "220.00").rol_minimo == "encargado"
    # Otra tienda sigue con la matriz por defecto.
    assert leer_matriz(conexion, tienda="madrid-centro").tienda is None
    historia = historial_matriz(conexion, "talavera")
    assert [(h["version"], h["creada_por"], h["motivo"]) for h in historia] == [
        (1, "ger-talavera", "temporada alta"), (2, "reg-centro", None),
    ]
    assert leer_matriz(conexion, tienda="talavera", version=3) is None


def test_una_version_guardada_no_se_puede_modificar_ni_borrar(conexion):
    with pytest.raises(psycopg.errors.RaiseException, match="no se modifican"):
        conexion.execute("UPDATE limites_autoridad SET limite = 5000 WHERE rol = 'encargado'")
    with pytest.raises(psycopg.errors.RaiseException):
        conexion.execute("DELETE FROM matrices_autoridad")


def test_las_versiones_de_un_proceso_se_leen_de_la_base_una_sola_vez_y_no_se_comparten(conexion, bd_url):
    v1 = fijar_matriz(conexion, tienda="talavera", limites=_limites("200"),
                      dos_firmas_por_encima={"reembolso": D("400")}, autor="ger-talavera")
    versiones = VersionesMatriz()
    assert versiones.leer(conexion, v1.id) == leer_matriz_por_id(conexion, v1.id)
    # La segunda vez no toca la conexión (cerrada: cualquier consulta fallaría).
    cerrada = psycopg.connect(bd_url)
    cerrada.close()
    assert versiones.leer(cerrada, v1.id).limite("encargado", "reembolso") == D("200.00")
    # Otra caché (otro pool, otra base) sí va a la base: nunca es global al módulo.
    with pytest.raises(psycopg.OperationalError):
        VersionesMatriz().leer(cerrada, v1.id)
    # Un id que no existe no se guarda: se vuelve a mirar.
    assert versiones.leer(conexion, 10**9) is None
    with pytest.raises(psycopg.OperationalError):
        versiones.leer(cerrada, 10**9)


def test_una_matriz_incoherente_no_se_guarda(conexion):
    with pytest.raises(ValueError):
        fijar_matriz(conexion, tienda="talavera",
                     limites={"reembolso": {"encargado": D("300"), "regional": D("900")}},
                     dos_firmas_por_encima={}, autor="ger-talavera")
    assert historial_matriz(conexion, "talavera") == []


def test_el_ambito_de_cada_firmante_de_la_demo(conexion):
    assert ambito_firmante(conexion, "reg-centro").tiendas == ("madrid-centro", "talavera")
    assert ambito_firmante(conexion, "reg-centro").rol == "regional"
    assert ambito_firmante(conexion, "ger-talavera").tiendas == ("talavera",)
    assert ambito_firmante(conexion, "enc-talavera-2").rol == "encargado"
    with pytest.raises(Prohibido):
        ambito_firmante(conexion, "enc-talavera-baja")


def test_la_demo_trae_firmantes_contactos_y_los_pedidos_de_350_y_650_y_se_recarga_igual(conexion):
    darse_de_baja(conexion, "ger-talavera")
    cargar_demo(conexion)  # recargar deja lo mismo (y vuelve a dar de alta los contactos)
    cargar_demo(conexion)
    firmantes = conexion.execute(
        "SELECT encargado_id, rol FROM firmantes_tienda WHERE tienda = 'talavera' ORDER BY 1"
    ).fetchall()
    assert [(f["encargado_id"], f["rol"]) for f in firmantes] == [
        ("enc-talavera", "encargado"), ("enc-talavera-2", "encargado"),
        ("ger-talavera", "gerente"), ("reg-centro", "regional"),
    ]
    contactos = conexion.execute(
        "SELECT direccion FROM contactos_firmantes WHERE encargado_id = 'ger-talavera' AND baja IS NULL"
    ).fetchall()
    assert [c["direccion"] for c in contactos] == ["ger-talavera@tienda.example"]
    pedidos = conexion.execute(
        """SELECT id, cliente_id, tienda, importe, estado, (now()::date - entregado_en::date) AS dias
           FROM pedidos WHERE id IN ('P-20261005-0350', 'P-20261006-0650') ORDER BY id"""
    ).fetchall()
    assert [(p["cliente_id"], p["tienda"], p["importe"], p["estado"], p["dias"]) for p in pedidos] == [
        ("C-0009", "talavera", D("350.00"), "entregado", 2),
        ("C-0006", "talavera", D("650.00"), "entregado", 3),
    ]
    importes = conexion.execute(
        "SELECT pedido_id, sum(importe) AS total FROM lineas_pedido "
        "WHERE pedido_id IN ('P-20261005-0350', 'P-20261006-0650') GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert [i["total"] for i in importes] == [D("350.00"), D("650.00")]
