"""Direcciones de envío españolas: código postal validado y su provincia.

Una dirección es calle (con número), código postal, localidad y provincia; la provincia
no la escribe nadie: sale de los dos primeros dígitos del código postal (01 Álava ... 52
Melilla, la numeración de Correos, que es la del INE). Un código postal vale si tiene 5
dígitos y su prefijo está entre 01 y 52; el ``CHECK`` de ``sql/019_direccion.sql`` dice lo
mismo (lo comprueba ``tests/api/test_op_direccion.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from nucleo.errores import ErrorDominio

__all__ = [
    "PROVINCIAS",
    "RE_CODIGO_POSTAL",
    "Direccion",
    "CodigoPostalNoValido",
    "direccion",
    "provincia_de",
]

RE_CODIGO_POSTAL = re.compile(r"^(?:0[1-9]|[1-4][0-9]|5[0-2])[0-9]{3}$")

PROVINCIAS: Mapping[str, str] = MappingProxyType({
    "01": "Álava", "02": "Albacete", "03": "Alicante", "04": "Almería", "05": "Ávila",
    "06": "Badajoz", "07": "Illes Balears", "08": "Barcelona", "09": "Burgos", "10": "Cáceres",
    "11": "Cádiz", "12": "Castellón", "13": "Ciudad Real", "14": "Córdoba", "15": "A Coruña",
    "16": "Cuenca", "17": "Girona", "18": "Granada", "19": "Guadalajara", "20": "Gipuzkoa",
    "21": "Huelva", "22": "Huesca", "23": "Jaén", "24": "León", "25": "Lleida",
    "26": "La Rioja", "27": "Lugo", "28": "Madrid", "29": "Málaga", "30": "Murcia",
    "31": "Navarra", "32": "Ourense", "33": "Asturias", "34": "Palencia", "35": "Las Palmas",
    "36": "Pontevedra", "37": "Salamanca", "38": "Santa Cruz de Tenerife", "39": "Cantabria",
    "40": "Segovia", "41": "Sevilla", "42": "Soria", "43": "Tarragona", "44": "Teruel",
    "45": "Toledo", "46": "Valencia", "47": "Valladolid", "48": "Bizkaia", "49": "Zamora",
    "50": "Zaragoza", "51": "Ceuta", "52": "Melilla",
})


class CodigoPostalNoValido(ErrorDominio):
    """Un código postal que no es español (5 dígitos, prefijo de provincia 01-52)."""


def provincia_de(codigo_postal: Any) -> str | None:
    """La provincia del código postal, o None si no es un código postal español válido."""
    texto = str(codigo_postal or "").strip()
    return PROVINCIAS[texto[:2]] if RE_CODIGO_POSTAL.match(texto) else None


@dataclass(frozen=True, kw_only=True)
class Direccion:
    calle: str
    codigo_postal: str
    localidad: str
    provincia: str

    def texto(self) -> str:
        """«Calle Mayor 5, 28013 Madrid (Madrid)»: como la lee una persona."""
        return f"{self.calle}, {self.codigo_postal} {self.localidad} ({self.provincia})"

    def como_json(self) -> dict[str, str]:
        return {"calle": self.calle, "codigo_postal": self.codigo_postal,
                "localidad": self.localidad, "provincia": self.provincia}


def _limpio(valor: Any) -> str:
    return " ".join(str(valor or "").split())


def direccion(calle: Any, codigo_postal: Any, localidad: Any) -> Direccion:
    """La dirección validada, con su provincia.

    Raises:
        CodigoPostalNoValido: el código postal no tiene 5 dígitos o su prefijo no es de
            ninguna provincia (01-52).
        ErrorDominio: falta la calle o la localidad, o son demasiado largas.
    """
    cp = _limpio(codigo_postal)
    provincia = provincia_de(cp)
    if provincia is None:
        raise CodigoPostalNoValido(
            f"el código postal «{cp}» no es válido: son 5 cifras y las dos primeras, las de una "
            "provincia (01 a 52); pide al cliente que lo revise", codigo_postal=cp)
    calle, localidad = _limpio(calle), _limpio(localidad)
    if not calle or not localidad:
        raise ErrorDominio("falta la calle con su número o la localidad de la dirección nueva")
    if len(calle) > 200 or len(localidad) > 100:
        raise ErrorDominio("la calle o la localidad son demasiado largas")
    return Direccion(calle=calle, codigo_postal=cp, localidad=localidad, provincia=provincia)
