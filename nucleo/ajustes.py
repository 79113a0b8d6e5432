"""Ajustes del producto: una sola clase, leída del entorno.

Variables con prefijo ``AGENTE_``, más ``DATABASE_URL`` y las estándar de Langfuse.
Cada campo está documentado en la tabla de ajustes de ``docs/explotacion.md`` (lo comprueba
``tests/unidad/test_ajustes.py``).
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from nucleo.errores import ErrorConfiguracion
from nucleo.secretos import defecto_del_secreto

SECRETO_DEMO = "demo-no-usar-en-produccion"


class ProveedorOidc(BaseModel):
    """Un proveedor OpenID Connect para la entrada del personal (Google, Entra ID, Keycloak...)."""

    nombre: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,39}$", description="Nombre corto en las URL.")
    titulo: str = Field(default="", description="Texto del botón («Entrar con ...»).")
    emisor: str = Field(description="Issuer: su documento de descubrimiento cuelga de aquí.")
    client_id: str
    # SecretStr: nunca sale en un repr, un log ni un volcado de los ajustes.
    client_secret: SecretStr | None = None
    dominios: list[str] = Field(default_factory=list, description="Dominios de correo admitidos (vacío: todos).")
    scopes: str = "openid email profile"
    # Entra ID no envía ``email_verified``: su correo vale si es de ``dominios`` (los del inquilino).
    confiar_dominios: bool = Field(default=False, description="Sin email_verified, vale un correo de dominios.")

    def etiqueta(self) -> str:
        return self.titulo or self.nombre


class Ajustes(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTE_", extra="ignore")

    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("DATABASE_URL"),
        description="URL de un PostgreSQL existente; sin ella se arranca el embebido.",
    )
    pgdata: Path = Field(
        default=Path(".agente/pgdata"),
        description="Carpeta de datos del PostgreSQL embebido.",
    )
    pool_max: int = Field(
        default=10, ge=3,
        description=(
            "Conexiones a PostgreSQL del proceso en total: dos propias (candados de hilo y "
            "LISTEN) y el resto, el pool."
        ),
    )
    pool_espera: float = Field(
        default=3.0, gt=0, le=60,
        description="Segundos que se espera una conexión del pool antes de responder 503.",
    )
    modelo: str = Field(
        default="offline",
        description="'offline' (reglas, sin LLM) o 'proveedor:modelo' de init_chat_model.",
    )
    modelo_base_url: str | None = Field(
        default=None, description="URL base de un servidor compatible con OpenAI."
    )
    demo: bool = Field(default=False, description="Modo demo: login de demo y secreto por defecto.")
    demo_buzon: Path | None = Field(
        default=None, description="Carpeta Maildir del buzón de la demo (la pone «agente demo»; /demo/correo la lee).",
    )
    # SecretStr: nunca sale en un repr, un log ni un volcado de los ajustes.
    secreto: SecretStr = Field(default=SecretStr(SECRETO_DEMO),
                               description="Secreto con el que se firman los tokens.")
    token_horas: int = Field(default=12, ge=1, description="Validez de los tokens emitidos.")
    oidc_proveedores: list[ProveedorOidc] = Field(
        default_factory=list,
        description="Proveedores OpenID Connect de la entrada del personal (JSON: una lista).",
    )
    sesion_minutos: int = Field(
        default=15, ge=2, le=720,
        description="Vida del token de una sesión del personal (OIDC o enlace); la página lo renueva.",
    )
    url: str = Field(
        default="http://127.0.0.1:8000",
        description="URL del servidor al que habla la CLI para actuar como la persona que ha entrado.",
    )
    pasarela_retardo: Decimal = Field(
        default=Decimal("0"), ge=0, description="Segundos que tarda la pasarela simulada."
    )
    pasarela_fallo: bool = Field(
        default=False, description="La pasarela simulada falla (pruebas y demos)."
    )
    pasarela: Literal["simulada", "stripe"] = Field(
        default="simulada",
        description="Pasarela de pagos: 'simulada' (demo y pruebas) o 'stripe' (docs/pasarelas.md).",
    )
    stripe_clave: SecretStr | None = Field(
        default=None, description="Clave secreta de la API de Stripe (sk_live_... o sk_test_...)."
    )
    stripe_secreto_webhook: SecretStr | None = Field(
        default=None, description="Secreto de firma del endpoint del webhook de Stripe (whsec_...)."
    )
    stripe_api_base: str | None = Field(
        default=None, description="URL base de la API de Stripe (vacío = la de Stripe; pruebas: la local)."
    )
    stripe_prefijo_claves: str = Field(
        default="agente", min_length=1, max_length=40,
        description="Prefijo de las claves de idempotencia y metadatos: uno por entorno sobre la misma cuenta.",
    )
    stripe_url_retorno: str = Field(
        default="http://localhost:8000/",
        description="Adónde vuelve el cliente tras pagar o cancelar un enlace de pago.",
    )
    stripe_minutos_pago: int = Field(
        default=60, ge=40, le=1440,
        description="Minutos que vale un enlace de pago de una diferencia antes de caducar.",
    )
    stripe_tolerancia_webhook: int = Field(
        default=300, ge=1, description="Segundos de antigüedad máxima de un webhook firmado de Stripe."
    )
    stripe_reintentos_red: int = Field(
        default=2, ge=0, le=5,
        description="Reintentos del SDK de Stripe donde Stripe dice que es seguro (red, 409, 5xx).",
    )
    ejecuciones_max: int = Field(
        default=100, ge=1,
        description="Ejecuciones del agente a la vez por proceso (turnos, decisiones, tareas).",
    )
    espera_ejecucion: float = Field(
        default=10.0, ge=0,
        description="Segundos que espera una petición por encima del máximo antes del 503.",
    )
    max_llamadas_modelo_turno: int = Field(default=8, ge=1, description="Llamadas al modelo por turno.")
    max_llamadas_modelo_hilo: int = Field(default=60, ge=1, description="Llamadas al modelo por hilo.")
    mensajes_por_minuto: int = Field(default=20, ge=1, description="Mensajes por cliente y minuto.")
    intervalo_tareas: float = Field(
        default=60.0, ge=0, description="Segundos entre pasadas de caducidad y conciliación (0 = apagado)."
    )
    retencion_dias: int = Field(
        default=0, ge=0, description="Días sin actividad tras los que el servidor borra checkpoints (0 = no)."
    )
    espera_parada: float = Field(
        default=20.0, ge=0, le=600,
        description="Segundos que, al parar, se deja a las ejecuciones en curso para terminar.",
    )
    keepalive: float = Field(
        default=75.0, ge=1, le=3600,
        description="Segundos que el servidor mantiene abierta una conexión HTTP ociosa; por encima "
        "del tiempo ocioso del proxy o balanceador que tenga delante.",
    )
    gc_umbral: int = Field(
        default=50_000, ge=0, le=10_000_000,
        description="Umbral de la generación 0 del recolector de Python en cada proceso de "
        "`agente serve`, con lo vivo al arrancar congelado (0: el de Python, 700).",
    )
    log_nivel: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Nivel de los logs JSON del servidor."
    )
    smtp_url: str | None = Field(
        default=None,
        description="Servidor SMTP de los avisos: smtp://, smtp+starttls:// o smtps://[usuario:clave@]host[:puerto].",
    )
    avisos_remitente: str = Field(
        default="avisos@tienda.example", description="Remitente (From) de los correos de aviso."
    )
    avisos_base_url: str = Field(
        default="http://127.0.0.1:8000",
        description="URL pública de la web: los avisos enlazan a {base}/encargado#{hilo}.",
    )
    avisos_intentos: int = Field(default=8, ge=1, description="Intentos de entrega de un aviso.")
    avisos_espera_base: float = Field(
        default=30.0, gt=0, description="Segundos de espera tras el primer fallo (se dobla en cada uno)."
    )
    avisos_espera_max: float = Field(
        default=3600.0, gt=0, description="Espera máxima entre dos intentos de un aviso."
    )
    avisos_timeout: float = Field(default=10.0, gt=0, description="Segundos por envío de un aviso.")
    avisos_cliente_canal: dict[str, str] = Field(
        default_factory=dict,
        description="Por dónde se avisa al cliente que cerró el chat, por tienda (JSON; «*» = las "
        "demás): «email» (por defecto), «ninguno» o una URL de Apprise con {email} y {telefono}.",
    )
    avisos_cliente_enlace_horas: float = Field(
        default=24.0, gt=0, le=168,
        description="Horas que sirve el enlace de un aviso al cliente para volver a su conversación.",
    )
    langfuse_public_key: str | None = Field(
        default=None, validation_alias=AliasChoices("LANGFUSE_PUBLIC_KEY")
    )
    langfuse_secret_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("LANGFUSE_SECRET_KEY")
    )
    langfuse_project_id: str | None = Field(
        default=None, validation_alias=AliasChoices("LANGFUSE_PROJECT_ID")
    )
    langfuse_host: str = Field(
        default="https://cloud.langfuse.com", validation_alias=AliasChoices("LANGFUSE_HOST")
    )

    evaluacion_dataset: str = Field(
        default="agente-evaluacion",
        description="Dataset de Langfuse con las tareas de «agente evaluar».",
    )
    langfuse_prompt: str | None = Field(
        default=None,
        description="Nombre del prompt de sistema en la gestión de prompts de Langfuse; sin él, el integrado.",
    )
    langfuse_prompt_etiqueta: str = Field(
        default="production", description="Etiqueta (label) de la versión del prompt de Langfuse."
    )
    langfuse_prompt_cache: int = Field(
        default=300, ge=0, description="Segundos que se guarda en memoria el prompt de Langfuse."
    )

    @field_validator("log_nivel", mode="before")
    @classmethod
    def _nivel_en_mayusculas(cls, valor):
        return valor.strip().upper() if isinstance(valor, str) else valor

    def clave_secreta_langfuse(self) -> str | None:
        """La clave secreta de Langfuse en claro, solo para dársela al SDK."""
        return self.langfuse_secret_key.get_secret_value() if self.langfuse_secret_key else None

    def secreto_es_de_demo(self) -> bool:
        valor = self.secreto.get_secret_value()
        return not valor or valor == SECRETO_DEMO

    def comprobar_secreto(self) -> None:
        """Fuera del modo demo, un secreto débil no vale (``nucleo.secretos``): error
        en una línea que nombra ``AGENTE_SECRETO``, y el servidor no llega a arrancar. No es un
        validador del campo: las órdenes que no firman tokens (``agente db status``) no lo piden."""
        if self.demo:
            return
        defecto = defecto_del_secreto(self.secreto.get_secret_value(), de_demo=SECRETO_DEMO)
        if defecto:
            raise ErrorConfiguracion(
                f"AGENTE_SECRETO: el secreto {defecto}; fuera del modo demo hace falta uno de al "
                "menos 32 bytes aleatorios: genera uno con «agente secreto»",
                ajuste="AGENTE_SECRETO",
            )

    def comprobar_pasarela(self) -> None:
        """Con ``AGENTE_PASARELA=stripe``, sin clave o sin secreto del webhook el servidor no
        arranca: un error en una línea, antes de tocar la base o de anunciar nada."""
        if self.pasarela != "stripe" or (self.stripe_clave and self.stripe_secreto_webhook):
            return
        raise ErrorConfiguracion(
            "Con AGENTE_PASARELA=stripe hacen falta AGENTE_STRIPE_CLAVE y "
            "AGENTE_STRIPE_SECRETO_WEBHOOK (docs/pasarelas.md); para probar sin cuenta de Stripe, "
            "agente demo --pasarela stripe-local",
            ajuste="AGENTE_STRIPE_CLAVE" if not self.stripe_clave else "AGENTE_STRIPE_SECRETO_WEBHOOK",
        )

    @property
    def tracing_activo(self) -> bool:
        return bool(self.langfuse_public_key and self.langfuse_secret_key)


@lru_cache(maxsize=1)
def ajustes() -> Ajustes:
    return Ajustes()
