"""El alta sin SQL (issue 43, punto 1) sobre PostgreSQL: el primer administrador una sola
vez, tiendas, regiones y personas con cada cambio anotado, y la separación de funciones
(nadie se concede un rol más alto ni más tiendas; un regional, solo su región)."""

from __future__ import annotations

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.alta import personal, tiendas
from agente.servicio.alta.primera import primera_persona
from agente.servicio.personas import encargado_activo
from nucleo.errores import DatosNoValidos, NoCuadra, NoEncontrado, Prohibido, YaExiste


@pytest.fixture
def c(bd_vacia_url):
    with psycopg.connect(bd_vacia_url, **KWARGS_CONEXION) as conexion:
        yield conexion


def _montar(c) -> None:
    """admin; región centro (talavera) y norte (bilbao); ger-t, enc-t en talavera; reg-c en centro."""
    primera_persona(c, nombre="Ana Ruiz", email="ana@mitienda.es")
    tiendas.crear_region(c, "admin", "cli", {"id": "centro", "nombre": "Centro"})
    tiendas.crear_region(c, "admin", "cli", {"id": "norte", "nombre": "Norte"})
    tiendas.crear_tienda(c, "admin", "cli", {"id": "talavera", "nombre": "Talavera", "region": "centro",
                                            "codigo_postal": "45600", "calle": "Calle Mayor 1",
                                            "localidad": "Talavera de la Reina"})
    tiendas.crear_tienda(c, "admin", "cli", {"id": "bilbao", "nombre": "Bilbao", "region": "norte"})
    for id_, rol, donde in (("ger-t", "gerente", {"tienda": "talavera"}), ("enc-t", "encargado", {"tienda": "talavera"}),
                            ("reg-c", "regional", {"region": "centro"})):
        personal.crear_persona(c, "admin", "cli", {"id": id_, "nombre": id_.upper(), "email": f"{id_}@mitienda.es",
                                                   "rol": rol, **donde})


def test_la_primera_persona_es_administrador_una_sola_vez_y_trae_su_enlace(c):
    enlace = primera_persona(c, nombre="Ana Ruiz", email="ana@mitienda.es")
    assert enlace.url("http://x").startswith("http://x/entrada/correo#correo=ana%40mitienda.es&t=")
    ana = encargado_activo(c, "admin")
    assert (ana.administrador, ana.tienda, ana.tiendas) == (True, None, ())
    with pytest.raises(YaExiste, match="solo vale en una base sin ninguno"):
        primera_persona(c, nombre="Otro", email="otro@mitienda.es", id="otro")
    assert c.execute("SELECT count(*) AS n FROM encargados").fetchone()["n"] == 1
    assert c.execute("SELECT quien, accion FROM cambios_alta").fetchall() == [{"quien": "operador", "accion": "primera"}]


def test_el_alta_crea_tiendas_y_personas_y_anota_quien_lo_hizo(c):
    _montar(c)
    t = c.execute("SELECT t.provincia, a.zona_horaria, p.limite_reembolso FROM tiendas t "
                  "JOIN avisos_tienda a ON a.tienda = t.id JOIN politicas_tienda p ON p.tienda = t.id "
                  "WHERE t.id = 'talavera'").fetchone()
    assert (t["provincia"], t["zona_horaria"], str(t["limite_reembolso"])) == ("Toledo", "Europe/Madrid", "60.00")
    # El regional firma en las tiendas activas de su región, y deja de hacerlo al desactivarla.
    assert encargado_activo(c, "reg-c").tiendas == ("talavera",)
    assert encargado_activo(c, "enc-t").tiendas == ("talavera",)
    tiendas.crear_tienda(c, "reg-c", "web", {"id": "toledo", "nombre": "Toledo", "region": "centro",
                                            "zona_horaria": "Europe/Madrid"})
    assert encargado_activo(c, "reg-c").tiendas == ("talavera", "toledo")
    tiendas.desactivar_tienda(c, "reg-c", "web", "toledo")
    assert encargado_activo(c, "reg-c").tiendas == ("talavera",)
    personal.desactivar_persona(c, "ger-t", "cli", "enc-t")
    with pytest.raises(Prohibido, match="baja"):
        encargado_activo(c, "enc-t")
    anotados = c.execute("SELECT quien, canal, objeto, objeto_id, accion, antes ->> 'activo' AS antes, "
                         "despues ->> 'activo' AS despues FROM cambios_alta ORDER BY id").fetchall()
    assert len(anotados) == 11
    assert anotados[-1] == {"quien": "ger-t", "canal": "cli", "objeto": "persona", "objeto_id": "enc-t",
                            "accion": "desactivar", "antes": "true", "despues": "false"}
    assert [(a["quien"], a["objeto_id"], a["accion"]) for a in anotados[-3:-1]] == [
        ("reg-c", "toledo", "crear"), ("reg-c", "toledo", "desactivar")]
    with pytest.raises(psycopg.errors.RaiseException, match="no se modifica"):
        c.execute("DELETE FROM cambios_alta")


def test_un_gerente_no_se_hace_regional_ni_da_un_rol_mas_alto_que_el_suyo(c):
    _montar(c)
    with pytest.raises(Prohibido, match="Nadie cambia su propio rol"):
        personal.editar_persona(c, "ger-t", "cli", "ger-t", {"rol": "regional", "region": "centro", "tienda": ""})
    with pytest.raises(Prohibido, match="No puedes dar el rol de regional"):
        personal.crear_persona(c, "ger-t", "cli", {"id": "reg-2", "nombre": "R", "email": "r2@mitienda.es",
                                                   "rol": "regional", "region": "centro"})
    with pytest.raises(Prohibido, match="No puedes dar el rol de regional"):
        personal.editar_persona(c, "ger-t", "cli", "enc-t", {"rol": "regional", "region": "centro", "tienda": ""})
    with pytest.raises(Prohibido, match="Solo gestionas a las personas de tu tienda"):
        personal.crear_persona(c, "ger-t", "cli", {"id": "enc-b", "nombre": "B", "email": "b@mitienda.es",
                                                   "rol": "encargado", "tienda": "bilbao"})
    with pytest.raises(Prohibido, match="rol más alto que el tuyo"):
        personal.desactivar_persona(c, "ger-t", "cli", "reg-c")
    with pytest.raises(Prohibido, match="administrador"):
        personal.crear_persona(c, "reg-c", "cli", {"id": "adm-2", "nombre": "A", "email": "a2@mitienda.es",
                                                   "rol": "regional", "region": "centro", "administrador": True})
    assert c.execute("SELECT rol FROM encargados WHERE id = 'ger-t'").fetchone()["rol"] == "gerente"
    # Lo que sí puede: un encargado de su tienda.
    creado = personal.crear_persona(c, "ger-t", "cli", {"id": "enc-2", "nombre": "Eva", "email": "eva@mitienda.es",
                                                        "rol": "encargado", "tienda": "talavera"})
    assert creado["activo"] is True


def test_un_encargado_no_se_anade_tiendas_ni_da_de_alta_a_nadie(c):
    _montar(c)
    with pytest.raises(Prohibido, match="Un encargado no da de alta ni cambia a nadie"):
        personal.editar_persona(c, "enc-t", "web", "enc-t", {"tienda": "bilbao"})
    with pytest.raises(Prohibido, match="Un encargado"):
        personal.crear_persona(c, "enc-t", "web", {"id": "x", "nombre": "X", "email": "x@mitienda.es",
                                                   "rol": "encargado", "tienda": "talavera"})
    with pytest.raises(Prohibido, match="Solo un regional"):
        tiendas.crear_tienda(c, "enc-t", "web", {"id": "mia", "nombre": "Mía"})
    assert encargado_activo(c, "enc-t").tiendas == ("talavera",)


def test_un_regional_solo_gestiona_su_region_y_nadie_se_da_mas_tiendas(c):
    _montar(c)
    with pytest.raises(Prohibido, match="tu región"):
        tiendas.editar_tienda(c, "reg-c", "web", "bilbao", {"nombre": "Bilbao centro"})
    with pytest.raises(Prohibido, match="tu región"):
        tiendas.editar_tienda(c, "reg-c", "web", "talavera", {"region": "norte"})
    with pytest.raises(Prohibido, match="no es de tu región"):
        personal.crear_persona(c, "reg-c", "web", {"id": "enc-b", "nombre": "B", "email": "b@mitienda.es",
                                                   "rol": "encargado", "tienda": "bilbao"})
    with pytest.raises(Prohibido, match="Nadie cambia su propio rol"):
        personal.editar_persona(c, "reg-c", "web", "reg-c", {"region": "norte"})
    with pytest.raises(Prohibido, match="Solo un administrador"):
        tiendas.crear_region(c, "reg-c", "web", {"id": "sur", "nombre": "Sur"})
    # Sí: mover a un encargado entre tiendas de su región, cambiar el nombre de una suya.
    tiendas.crear_tienda(c, "reg-c", "web", {"id": "toledo", "nombre": "Toledo", "region": "centro"})
    assert personal.editar_persona(c, "reg-c", "web", "enc-t", {"tienda": "toledo"})["tienda"] == "toledo"
    assert [p["id"] for p in personal.listar_personas(c, "reg-c")] == ["reg-c", "ger-t", "enc-t"]


def test_los_errores_de_forma_dicen_que_falta_en_espanol(c):
    _montar(c)
    with pytest.raises(NoCuadra, match="La zona horaria Europa/Madrid no existe"):
        tiendas.crear_tienda(c, "admin", "web", {"id": "z", "nombre": "Z", "zona_horaria": "Europa/Madrid"})
    with pytest.raises(NoCuadra, match="es de Toledo, no de Madrid"):
        tiendas.editar_tienda(c, "admin", "web", "talavera", {"provincia": "Madrid"})
    with pytest.raises(YaExiste, match="Ya hay una tienda talavera"):
        tiendas.crear_tienda(c, "admin", "web", {"id": "talavera", "nombre": "Otra"})
    with pytest.raises(YaExiste, match="Ya hay otra persona con el correo GER-T@mitienda.es"):
        personal.crear_persona(c, "admin", "web", {"id": "otra", "nombre": "O", "email": "GER-T@mitienda.es",
                                                   "rol": "encargado", "tienda": "talavera"})
    with pytest.raises(NoEncontrado, match="No hay ninguna tienda sevilla"):
        personal.crear_persona(c, "admin", "web", {"id": "s", "nombre": "S", "email": "s@mitienda.es",
                                                   "rol": "encargado", "tienda": "sevilla"})
    with pytest.raises(DatosNoValidos, match="El id de la tienda solo lleva minúsculas"):
        tiendas.crear_tienda(c, "admin", "web", {"id": "Mi Tienda", "nombre": "X"})
    with pytest.raises(YaExiste, match="aún tiene tiendas activas"):
        tiendas.desactivar_region(c, "admin", "web", "norte")
