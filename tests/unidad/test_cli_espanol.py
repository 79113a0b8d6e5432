"""La CLI habla español a quien la usa: la ayuda de cada orden, sus errores de uso (un valor
que no es del tipo, una opción que no existe, lo obligatorio que falta), los nombres de las
decisiones y los importes escritos con coma o con punto (sin base: lo que depende de ella está en
``tests/procesos/test_cli_bandeja.py``)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from agente.cli import app
from agente.servicio.decisiones.decididas import nombre_decision, nombre_operacion, tipo_de_nombre
from nucleo import dinero
from nucleo.errores import ImporteNoValido

INGLES = ("Usage", "Options", "Commands", "Arguments", "Show this message", "[required]",
          "default:", "install-completion", "[OPTIONS]", "<str>", "<bool>", "<int", "<datetime>")


def _ordenes(comando, ruta=()):
    yield ruta
    for nombre, sub in getattr(comando, "commands", {}).items():
        yield from _ordenes(sub, (*ruta, nombre))


PERSONALES = [("decidir",), ("politica", "fijar"), ("politica", "solicitudes"), ("politica", "firmar"),
              ("politica", "rechazar"),
              *[(grupo, orden) for grupo in ("tiendas", "regiones", "personas")
                for orden in ("crear", "editar", "desactivar", "listar")]]


def _sub(ruta):
    comando = get_command(app)
    for nombre in ruta:
        comando = comando.commands[nombre]
    return comando


@pytest.mark.parametrize("ruta", list(_ordenes(get_command(app))), ids=lambda r: " ".join(r) or "agente")
def test_la_ayuda_de_cada_orden_esta_en_espanol_y_sin_marcado_crudo(ruta):
    salida = CliRunner().invoke(app, [*ruta, "--help"], env={"COLUMNS": "140"}, prog_name="agente").output
    assert "Uso: agente" in salida and "Muestra esta ayuda y sale." in salida
    assert not [x for x in INGLES if x in salida], salida
    assert "``" not in salida and "[/" not in salida, salida


@pytest.mark.parametrize("ruta", [r for r in _ordenes(get_command(app)) if r and r[-1] not in ("entrar", "salir")
                                  and not getattr(_sub(r), "commands", None)], ids=" ".join)
def test_cada_orden_dice_si_actua_como_quien_ha_entrado_o_es_local(ruta):
    salida = " ".join(CliRunner().invoke(app, [*ruta, "--help"], env={"COLUMNS": "400"}).output.split())
    como_persona = "a través del servidor" in salida
    assert como_persona != ("Orden local" in salida), salida
    assert como_persona == (ruta in PERSONALES), salida



def test_las_decisiones_se_nombran_en_espanol_y_se_aceptan_en_los_dos_idiomas():
    assert [nombre_decision(t) for t in ("approve", "edit", "reject", "respond", "caducada")] == [
        "aprobada", "editada", "rechazada", "respondida", "caducada"]
    assert tipo_de_nombre("editada") == "edit" and tipo_de_nombre("Rechazada") == "reject"
    assert tipo_de_nombre("edit") == "edit"  # los tipos de la API siguen valiendo
    with pytest.raises(ValueError, match="aprobada, editada, rechazada, respondida, caducada"):
        tipo_de_nombre("quizas")


def test_las_herramientas_se_nombran_por_el_titulo_de_su_operacion():
    assert nombre_operacion("reembolsar") == "Reembolso"
    assert nombre_operacion("sustituir") == "Cambio de producto"
    assert nombre_operacion("desconocida") == "desconocida"


@pytest.mark.parametrize(("escrito", "valor"), [
    ("300,50", "300.50"), ("300.50", "300.50"), ("1.234,50", "1234.50"), (" 90 ", "90.00"),
    ("90,5 EUR", "90.50"), ("12,00€", "12.00"),
])
def test_un_importe_escrito_por_una_persona_vale_con_coma_o_punto(escrito, valor):
    assert dinero.importe_escrito(escrito) == Decimal(valor)


@pytest.mark.parametrize("escrito", ["1,234.50", "1,2,3", "10,009", "0,00", "-5,00", "abc", "1.234"])
def test_un_importe_ambiguo_o_no_valido_no_se_adivina(escrito):
    with pytest.raises(ImporteNoValido):
        dinero.importe_escrito(escrito)


def test_el_modelo_y_la_api_siguen_sin_aceptar_coma():
    with pytest.raises(ImporteNoValido):
        dinero.importe("300,50")


class _Bandeja:
    """Lo que ``agente decidir`` lee del servidor para resolver un prefijo: la bandeja."""

    def __init__(self, hilos):
        self.hilos = hilos

    def get(self, ruta, **_opciones):
        assert ruta == "/api/aprobaciones"
        return [{"thread_id": h} for h in self.hilos]


def test_un_prefijo_de_la_bandeja_elige_solo_si_es_unico():
    from agente.cli.bandeja import _resolver_hilo
    from nucleo.errores import DecisionNoValida

    bandeja = _Bandeja(["h-abcd1", "h-abcd2", "h-ffff9"])
    assert _resolver_hilo(bandeja, "h-ff") == "h-ffff9"
    assert _resolver_hilo(bandeja, "h-abcd2") == "h-abcd2"
    with pytest.raises(DecisionNoValida, match="varios hilos pendientes empiezan por «h-abcd»: h-abcd1, h-abcd2"):
        _resolver_hilo(bandeja, "h-abcd")
    with pytest.raises(DecisionNoValida, match="demasiado corto"):
        _resolver_hilo(bandeja, "h-")
    assert _resolver_hilo(bandeja, "h-0000") == "h-0000"  # el servidor dirá si existe


# Lo que click, Typer y pydantic dicen en inglés al fallar el uso de una orden.
INGLES_ERRORES = ("Invalid value", "Missing ", "No such", "requires an argument", "Input should",
                  "unable to parse", "Got unexpected", "Possible options", "does not exist", "Did you mean",
                  "is not a valid", "Could not open", "Error: Usage")


def _hojas(comando, ruta=()):
    subordenes = getattr(comando, "commands", None)
    if subordenes:
        for nombre, sub in subordenes.items():
            yield from _hojas(sub, (*ruta, nombre))
    else:
        yield ruta, comando


def _relleno(comando, salvo: str | None = None) -> list[str]:
    """Lo obligatorio de ``comando`` con un valor cualquiera (menos ``salvo``)."""
    args, opciones = [], []
    for p in comando.params:
        if not p.required or p.name == salvo:
            continue
        if p.param_type_name == "argument":
            args.append("x")
        else:
            opciones += [p.opts[0], "x"]
    return [*args, *opciones]


def _usos_erroneos(comando) -> list[tuple[str, list[str]]]:
    """Invocaciones que fallan al leer la línea (nunca llegan a ejecutar la orden)."""
    usos = [("opción que no existe", [*_relleno(comando), "--no-existe"]),
            ("argumento de más", [*_relleno(comando), "sobra", "y-otro"])]
    if any(p.required for p in comando.params):
        usos.append(("sin lo obligatorio", []))
    for p in comando.params:
        if getattr(p, "is_flag", False):
            continue
        for malo in ("abc", "-1", "1e9999", "2026-13-45"):
            if p.param_type_name == "argument":
                posicionales = [malo if q.name == p.name else "x" for q in comando.params
                                if q.param_type_name == "argument" and (q.required or q.name == p.name)]
                resto = [a for q in comando.params if q.param_type_name != "argument" and q.required
                         for a in (q.opts[0], "x")]
                usos.append((f"{p.name}={malo}", [*posicionales, *resto]))
            else:
                usos.append((f"{p.name}={malo}", [*_relleno(comando, salvo=p.name), p.opts[0], malo]))
        usos.append((f"{p.name} sin valor", [*_relleno(comando, salvo=p.name), *p.opts[:1]]))
    return usos


def _falla_al_leer(comando, args: list[str]) -> bool:
    from typer._click.exceptions import ClickException

    try:
        comando.make_context("agente", list(args))
    except ClickException:
        return True
    return False


@pytest.mark.parametrize(("ruta", "comando"), [pytest.param(r, c, id=" ".join(r))
                                               for r, c in _hojas(get_command(app))])
def test_cada_orden_con_valores_erroneos_contesta_en_espanol(ruta, comando):
    probados = 0
    for que, args in _usos_erroneos(comando):
        if not _falla_al_leer(comando, args):
            continue  # un texto cualquiera vale al leer: lo comprueba la orden (y su prueba)
        resultado = CliRunner().invoke(app, [*ruta, *args], env={"COLUMNS": "200"}, prog_name="agente")
        assert resultado.exit_code == 2, (que, resultado.output)
        ingles = [x for x in (*INGLES, *INGLES_ERRORES) if x in resultado.output]
        assert not ingles, (que, resultado.output)
        probados += 1
    assert probados >= 2  # al menos la opción que no existe y el argumento de más


def test_firmar_una_solicitud_que_no_es_un_numero_contesta_en_espanol():
    resultado = CliRunner().invoke(app, ["politica", "firmar", "abc", "--firmante", "reg-centro"],
                                   env={"COLUMNS": "200"}, prog_name="agente")
    assert resultado.exit_code == 2
    assert "Valor no válido para 'solicitud': debe ser un número entero" in resultado.output
