"""La separación de funciones del alta: quién puede crear, cambiar o desactivar qué.

Rangos, de menor a mayor: encargado, gerente, regional y administrador (un administrador
tiene rol de firma ``regional`` y además gestiona todo el alta).

- Nadie se cambia a sí mismo el rol, la tienda, la región, el alta ni la marca de
  administrador: nadie se concede un rol más alto ni más tiendas.
- Nadie da un rango más alto que el suyo, ni cambia a quien está por encima.
- Un encargado no gestiona a nadie; un gerente, solo a las personas de su tienda; un
  regional, solo lo de su región (sus tiendas, las personas de ellas y los regionales de
  su región); un administrador, todo.
- Las tiendas las gestionan un regional (en su región) o un administrador; las regiones,
  solo un administrador.

Funciones puras: lo que hay en la base lo leen ``tiendas`` y ``personal`` y lo pasan aquí.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nucleo.errores import Prohibido

__all__ = [
    "RANGOS",
    "Persona",
    "comprobar_gestor_de_personas",
    "comprobar_gestor_de_tiendas",
    "comprobar_persona",
    "comprobar_region",
    "comprobar_tienda",
    "nombre_rango",
]

RANGOS = {"encargado": 1, "gerente": 2, "regional": 3}
RANGO_ADMINISTRADOR = 4
_NOMBRES = {1: "encargado", 2: "gerente", 3: "regional", 4: "administrador"}
CAMPOS_PROPIOS = ("rol", "tienda", "region", "administrador", "activo")


@dataclass(frozen=True)
class Persona:
    """Una fila de ``encargados`` con lo que el alta mira."""

    id: str
    nombre: str
    rol: str
    tienda: str | None = None
    region: str | None = None
    administrador: bool = False
    activo: bool = True
    email: str | None = None

    @property
    def rango(self) -> int:
        return RANGO_ADMINISTRADOR if self.administrador else RANGOS.get(self.rol, 0)


def nombre_rango(persona: Persona) -> str:
    return _NOMBRES.get(persona.rango, persona.rol)


def comprobar_gestor_de_personas(gestor: Persona) -> None:
    """Antes de mirar los datos: un encargado no gestiona a nadie."""
    if gestor.rango < RANGOS["gerente"]:
        raise Prohibido("Un encargado no da de alta ni cambia a nadie: pídeselo a tu gerente.")


def comprobar_gestor_de_tiendas(gestor: Persona) -> None:
    """Antes de mirar los datos: solo un regional con región o un administrador."""
    if not gestor.administrador and (gestor.rol != "regional" or gestor.region is None):
        raise Prohibido("Solo un regional (en su región) o un administrador da de alta o cambia tiendas.")


def comprobar_persona(
    gestor: Persona, antes: Persona | None, despues: Persona, region_de_tienda: Callable[[str], str | None]
) -> None:
    """``Prohibido`` si ``gestor`` no puede dejar a la persona ``antes`` (``None``: alta
    nueva) como ``despues``."""
    comprobar_gestor_de_personas(gestor)
    if antes is not None and antes.id == gestor.id:
        if any(getattr(antes, campo) != getattr(despues, campo) for campo in CAMPOS_PROPIOS):
            raise Prohibido("Nadie cambia su propio rol, su tienda, su región ni su alta: "
                            "pídeselo a quien está por encima de ti.")
        return
    if antes is not None:
        if antes.rango > gestor.rango:
            raise Prohibido(f"{antes.nombre} tiene un rol más alto que el tuyo: no puedes cambiarlo.")
        _comprobar_alcance(gestor, antes, region_de_tienda)
    if despues.rango > gestor.rango:
        raise Prohibido(f"No puedes dar el rol de {nombre_rango(despues)}: es más alto que el tuyo "
                        f"({nombre_rango(gestor)}).")
    _comprobar_alcance(gestor, despues, region_de_tienda)


def _comprobar_alcance(gestor: Persona, persona: Persona, region_de_tienda: Callable[[str], str | None]) -> None:
    if gestor.administrador:
        return
    if gestor.rol == "regional":
        if gestor.region is None:
            raise Prohibido("No tienes región: solo un administrador puede dártela.")
        if persona.region not in (None, gestor.region):
            raise Prohibido(f"La región {persona.region} no es la tuya ({gestor.region}).")
        if persona.tienda is not None and region_de_tienda(persona.tienda) != gestor.region:
            raise Prohibido(f"La tienda {persona.tienda} no es de tu región ({gestor.region}).")
        if persona.tienda is None and persona.region is None:
            raise Prohibido("Solo gestionas a las personas de tu región.")
        return
    if persona.tienda != gestor.tienda or persona.region is not None:
        raise Prohibido(f"Solo gestionas a las personas de tu tienda ({gestor.tienda}).")


def comprobar_tienda(gestor: Persona, region_antes: str | None, region_despues: str | None, *,
                     nueva: bool) -> None:
    """Tiendas: un administrador, todas; un regional, las de su región (y no las saca de ella)."""
    comprobar_gestor_de_tiendas(gestor)
    if gestor.administrador:
        return
    if region_despues != gestor.region or (not nueva and region_antes != gestor.region):
        raise Prohibido(f"Solo gestionas las tiendas de tu región ({gestor.region}).")


def comprobar_region(gestor: Persona) -> None:
    """Regiones: solo un administrador."""
    if not gestor.administrador:
        raise Prohibido("Solo un administrador da de alta o cambia regiones.")
