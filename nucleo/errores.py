"""Errores del dominio, con su estado HTTP (se traducen a HTTP en un solo sitio).

    ErrorDominio (400)
    ├── ErrorConfiguracion            ajuste inválido o servicio inalcanzable (500)
    ├── ContextoAusente               falta el contexto del cliente en la ejecución (500)
    ├── PedidoNoEncontrado            no existe o no es del cliente (404)
    ├── ProductoNoEncontrado          (404)
    ├── ImporteNoValido               <= 0 o por encima de lo reembolsable (422)
    ├── ConflictoIdempotencia         misma clave, otros argumentos (409)
    ├── AprobacionCaducada            stock o precio cambiaron desde la propuesta (409)
    ├── SinStock                      (409)
    ├── NecesitaFirma                 al ejecutar, la regla ya no deja hacerlo sin firma (409)
    ├── ErrorPasarela                 el proveedor de pagos falló (502)
    ├── EventoNoValido                un webhook del proveedor sin firma válida o viejo (400)
    ├── HiloNoEncontrado              (404)
    ├── TiendaNoEncontrada            (404)
    ├── NadaPendiente                 no hay aprobación pendiente en el hilo (404)
    ├── YaDecidida                    otra decisión llegó antes (409)
    ├── YaFirmada                     la misma persona firma dos veces la misma aprobación (409)
    ├── PlazoVencido                  la aprobación pasó su plazo: ya no se decide (409)
    ├── ReclamadaPorOtro              otro encargado dijo «lo atiendo yo» (409)
    ├── AprobacionPendiente           el hilo espera a un encargado (409)
    ├── HiloOcupado                   otra ejecución tiene el hilo ahora mismo (409, Retry-After)
    ├── DecisionNoValida              (422)
    ├── TextoNoValido                 texto con el carácter nulo, que PostgreSQL no admite (422)
    ├── RegistroNoValido              un registro de la ingesta mal formado, con su campo (422)
    ├── RegistroRechazado             un registro que no cuadra o rompería los libros (409)
    ├── NoAutorizado                  sin credencial válida (401)
    ├── Prohibido                     otra tienda, otro cliente, encargado inactivo (403)
    ├── DemasiadasPeticiones          (429)
    ├── NoEncontrado                  una tienda, región o persona del alta que no existe (404)
    ├── YaExiste                      un id o un correo del alta que ya es de otro (409)
    ├── DatosNoValidos                un dato del alta sin la forma (422)
    ├── NoCuadra                      un alta con la forma que no cuadra: zona, rol sin tienda... (409)
    └── NoDisponible                  parada del servidor, saturación...: reintentar (503, Retry-After)
        ├── Saturado                  el proceso ya ejecuta su máximo de turnos a la vez
        └── CandadoPerdido            se perdió el candado del hilo a mitad de la ejecución

El ``mensaje`` está en español: lo lee un cliente, un encargado o un operador.
"""

from __future__ import annotations

from typing import Any


class ErrorDominio(Exception):
    estado_http = 400

    def __init__(self, mensaje: str, **datos: Any) -> None:
        super().__init__(mensaje)
        self.mensaje = mensaje
        self.datos = datos


class ErrorConfiguracion(ErrorDominio):
    estado_http = 500


class ContextoAusente(ErrorDominio):
    estado_http = 500


class PedidoNoEncontrado(ErrorDominio):
    estado_http = 404

    def __init__(self, pedido: str) -> None:
        # Mismo texto para "no existe" y "es de otro cliente": no se filtra su existencia.
        super().__init__(f"pedido no encontrado: {pedido}", pedido=pedido)


class ProductoNoEncontrado(ErrorDominio):
    estado_http = 404

    def __init__(self, sku: str) -> None:
        super().__init__(f"producto no encontrado: {sku}", sku=sku)


class ImporteNoValido(ErrorDominio):
    estado_http = 422


class ConflictoIdempotencia(ErrorDominio):
    estado_http = 409


class AprobacionCaducada(ErrorDominio):
    estado_http = 409


class SinStock(ErrorDominio):
    estado_http = 409


class NecesitaFirma(ErrorDominio):
    """El efecto volvió a decidir su regla bajo el candado del cliente y ya no sale sin firma.

    Lo lanza la revalidación (``nucleo.puertos.Revalidador``) dentro de la transacción
    del efecto, que se deshace: no se escribe nada. ``revalidacion`` lleva el veredicto nuevo
    (motivos, umbrales, autoridad) para guardarlo; el middleware de revalidación lo convierte
    en una pausa normal para un encargado, nunca en un error que lea el cliente.
    """

    estado_http = 409

    def __init__(self, motivos: tuple[str, ...], *, revalidacion: object = None) -> None:
        super().__init__(
            "esta operación necesita ahora la firma de un encargado: " + "; ".join(motivos),
            motivos=list(motivos),
        )
        self.motivos = tuple(motivos)
        self.revalidacion = revalidacion


class ErrorPasarela(ErrorDominio):
    estado_http = 502


class EventoNoValido(ErrorDominio):
    estado_http = 400


class HiloNoEncontrado(ErrorDominio):
    estado_http = 404


class TiendaNoEncontrada(ErrorDominio):
    estado_http = 404


class NadaPendiente(ErrorDominio):
    estado_http = 404


class YaDecidida(ErrorDominio):
    estado_http = 409


class YaFirmada(ErrorDominio):
    estado_http = 409


class PlazoVencido(ErrorDominio):
    estado_http = 409


class ReclamadaPorOtro(ErrorDominio):
    estado_http = 409


class AprobacionPendiente(ErrorDominio):
    estado_http = 409


class HiloOcupado(ErrorDominio):
    """Otra ejecución del agente tiene el candado del hilo y no lo soltó a tiempo.

    No es una aprobación pendiente: basta con reintentar en ``reintentar_en`` segundos
    (la web lo manda en ``Retry-After``). ``registrada=True`` si una decisión del
    encargado ya quedó registrada antes: la aplicará quien suelte el hilo o el conciliador.
    """

    estado_http = 409

    def __init__(
        self,
        mensaje: str = "la conversación está ocupada con otra operación; inténtalo en unos segundos",
        *,
        thread_id: str,
        reintentar_en: int = 5,
        registrada: bool = False,
    ) -> None:
        super().__init__(
            mensaje, thread_id=thread_id, reintentar_en=reintentar_en, registrada=registrada
        )


class DecisionNoValida(ErrorDominio):
    estado_http = 422


class DecisionNoAplicable(DecisionNoValida):
    """Una decisión bien formada que no encaja con lo que está pendiente ahora (un tipo que
    esa operación no admite, otra herramienta, un campo que no se
    edita, un importe por encima de lo pedido o de lo que queda): 409, como cualquier otro
    conflicto con el estado. El esquema de la API no puede saberlo; 422 es solo forma."""

    estado_http = 409


class DecisionesDescuadradas(DecisionNoValida):
    """Las decisiones no casan con las operaciones de la tarjeta: otro número, u otro orden
    (una decisión que nombra la operación de otra posición). Es el cuerpo de la petición el
    que no vale, no el estado: 422, con el orden que se espera. No se decide nada."""

    estado_http = 422


class TextoNoValido(ErrorDominio):
    estado_http = 422


class RegistroNoValido(ErrorDominio):
    """Un registro de la ingesta de la tienda mal formado: ``datos["campo"]`` dice cuál."""

    estado_http = 422


class RegistroRechazado(ErrorDominio):
    """Un registro bien formado que no cuadra con lo que hay (otra tienda, un cliente o un
    producto que no existe, fechas o estado incoherentes) o que rompería los libros (una
    línea ya compensada, un pedido reembolsado que vuelve atrás): 409 con el motivo."""

    estado_http = 409


class NoAutorizado(ErrorDominio):
    estado_http = 401


class Prohibido(ErrorDominio):
    estado_http = 403


class DemasiadasPeticiones(ErrorDominio):
    estado_http = 429


class NoDisponible(ErrorDominio):
    """503: vuelve a intentarlo; ``datos["reintentar_en"]`` (segundos) va en ``Retry-After``."""

    estado_http = 503


class Saturado(NoDisponible):
    pass


class CandadoPerdido(NoDisponible):
    pass


class NoEncontrado(ErrorDominio):
    """Una tienda, región o persona del alta que no existe."""

    estado_http = 404


class YaExiste(ErrorDominio):
    """Un alta con un id o un correo que ya tiene otra tienda, región o persona."""

    estado_http = 409


class DatosNoValidos(ErrorDominio):
    """Un dato del alta que no tiene la forma (un correo, una zona horaria, un id)."""

    estado_http = 422


class NoCuadra(ErrorDominio):
    """Un alta que tiene la forma pero no cuadra: una zona horaria que no existe, un
    encargado sin tienda, una provincia que no es la del código postal, algo desactivado."""

    estado_http = 409
