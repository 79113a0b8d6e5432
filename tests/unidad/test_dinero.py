"""El módulo de dinero, con propiedades (Hypothesis): lee, rechaza y escribe euros.

Los oráculos de formato se calculan aquí a partir de céntimos enteros, sin usar el
código que se prueba: si ``dinero.eur`` cambiara de algoritmo, la prueba lo diría.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nucleo import dinero
from nucleo.errores import ImporteNoValido

POCOS = settings(max_examples=60, deadline=None)

# Importes válidos: de 0,01 a 9.999.999.999,99 (numeric(12,2)), siempre con dos decimales.
importes = st.integers(min_value=1, max_value=999_999_999_999).map(lambda c: Decimal(c).scaleb(-2))
# Con signo y cero: las diferencias de precio.
con_signo = st.integers(min_value=-999_999_999_999, max_value=999_999_999_999).map(
    lambda c: Decimal(c).scaleb(-2)
)
# Texto con un número decimal «normal» (solo cifras ASCII, punto, signo, exponente).
_NUMERO = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*", re.ASCII)


def eur_oraculo(centimos: int) -> str:
    """«1.234,50 EUR» desde céntimos enteros: miles con punto, coma decimal, «-» delante."""
    euros, cent = divmod(abs(centimos), 100)
    cifras = str(euros)
    grupos = []
    while cifras:
        grupos.insert(0, cifras[-3:])
        cifras = cifras[:-3]
    signo = "-" if centimos < 0 else ""
    return f"{signo}{'.'.join(grupos)},{cent:02d} EUR"


def centimos(valor: Decimal) -> int:
    return int(valor * 100)


# --- leer -----------------------------------------------------------------------------


@POCOS
@given(importes)
def test_un_importe_valido_vuelve_igual_de_su_texto(d):
    assert dinero.importe(dinero.texto(d)) == d
    assert dinero.texto(dinero.importe(dinero.texto(d))) == dinero.texto(d)


@POCOS
@given(importes)
def test_un_importe_valido_se_lee_igual_como_decimal_texto_o_float(d):
    assert dinero.importe(d) == d
    assert dinero.importe(str(d)) == d
    # Un float de JSON se lee por su repr más corta (24.9 -> 24.90, nunca 24.899999...).
    assert dinero.importe(float(d)) == d
    assert dinero.importe_o_none(d) == d


@POCOS
@given(st.integers(min_value=1, max_value=9_999_999_999))
def test_un_entero_es_un_importe_con_dos_decimales(n):
    assert dinero.importe(n) == Decimal(n)
    assert dinero.texto(dinero.importe(n)) == f"{n}.00"


@POCOS
@given(importes, st.integers(min_value=1, max_value=9))
@example(Decimal("10.00"), 9)  # el caso del issue: 10.009 se pagaba como 10,01
def test_mas_de_dos_decimales_se_rechaza_nunca_se_redondea(d, extra):
    tres = d + Decimal(extra).scaleb(-3)
    with pytest.raises(ImporteNoValido, match="más de dos decimales"):
        dinero.importe(tres)
    with pytest.raises(ImporteNoValido, match="más de dos decimales"):
        dinero.importe(str(tres))
    with pytest.raises(ImporteNoValido, match="más de dos decimales"):
        dinero.diferencia(-tres)
    assert dinero.importe_o_none(str(tres)) is None


@POCOS
@given(con_signo.filter(lambda d: d <= 0))
def test_cero_y_negativos_no_son_importes(d):
    with pytest.raises(ImporteNoValido, match="mayor que cero"):
        dinero.importe(d)
    assert dinero.importe_o_none(dinero.texto(d)) is None


@POCOS
@given(st.integers(min_value=1, max_value=10**20))
def test_por_encima_de_numeric_12_2_se_rechaza(exceso):
    grande = dinero.MAXIMO + Decimal(exceso).scaleb(-2)
    with pytest.raises(ImporteNoValido, match="demasiado grande"):
        dinero.importe(grande)
    with pytest.raises(ImporteNoValido, match="demasiado grande"):
        dinero.diferencia(-grande)
    assert dinero.importe(dinero.MAXIMO) == Decimal("9999999999.99")


@pytest.mark.parametrize(
    "valor",
    [float("nan"), float("inf"), float("-inf"), "nan", "NaN", "sNaN", "Infinity", "-inf",
     Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity")],
)
def test_no_finito_se_rechaza(valor):
    with pytest.raises(ImporteNoValido, match="no es un número válido"):
        dinero.importe(valor)
    with pytest.raises(ImporteNoValido):
        dinero.diferencia(valor)


@pytest.mark.parametrize("valor", [True, False, None])
def test_booleanos_y_none_no_son_dinero(valor):
    with pytest.raises(ImporteNoValido, match="no es un número válido"):
        dinero.importe(valor)
    with pytest.raises(ImporteNoValido, match="no es un número válido"):
        dinero.diferencia(valor)
    assert dinero.importe_o_none(valor) is None


@POCOS
@given(st.text(max_size=20).filter(lambda s: not _NUMERO.fullmatch(s.strip())))  # el espacio alrededor se tolera
@example("120,00")  # coma decimal: se rechaza, no se lee como 12000
@example("1_000")  # Decimal() aceptaría el guion bajo
@example("١٢")  # y cifras que no son ASCII
@example("12 EUR")
@example("")
def test_texto_que_no_es_un_numero_se_rechaza(texto):
    with pytest.raises(ImporteNoValido):
        dinero.importe(texto)
    with pytest.raises(ImporteNoValido):
        dinero.diferencia(texto)
    assert dinero.importe_o_none(texto) is None


@POCOS
@given(con_signo)
def test_diferencia_admite_cero_y_negativos_con_dos_decimales(d):
    assert dinero.diferencia(d) == d
    assert dinero.diferencia(dinero.texto(d)) == d
    assert dinero.diferencia(0) == dinero.CERO


# --- escribir -------------------------------------------------------------------------


@POCOS
@given(con_signo)
@example(Decimal("1234.50"))
@example(Decimal("-90.10"))
@example(Decimal("-1000000.00"))
@example(Decimal("0.00"))
def test_eur_escribe_miles_con_punto_coma_decimal_y_signo_menos(d):
    assert dinero.eur(d) == eur_oraculo(centimos(d))


@POCOS
@given(con_signo)
def test_eur_con_signo_pone_mas_solo_a_los_positivos(d):
    esperado = eur_oraculo(centimos(d))
    assert dinero.eur(d, signo=True) == ("+" + esperado if d > 0 else esperado)


@POCOS
@given(con_signo)
def test_texto_es_el_formato_de_json_sin_miles(d):
    t = dinero.texto(d)
    c = centimos(d)
    assert t == f"{'-' if c < 0 else ''}{abs(c) // 100}.{abs(c) % 100:02d}"
    assert dinero.diferencia(t) == d


def test_el_cero_negativo_se_escribe_como_cero():
    assert dinero.texto(Decimal("-0.00")) == "0.00"
    assert dinero.eur(Decimal("-0")) == "0,00 EUR"
    assert dinero.diferencia("-0") == dinero.CERO and dinero.texto(dinero.diferencia("-0")) == "0.00"


def test_sumar_y_cuantizar_dan_dos_decimales():
    assert dinero.sumar([Decimal("1.1"), Decimal("2")]) == Decimal("3.10")
    assert str(dinero.sumar([])) == "0.00"
    assert str(dinero.cuantizar(5)) == "5.00"
